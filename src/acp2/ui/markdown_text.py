"""Agent text as markdown, with nothing lost to the parser's nesting limit.

The markdown parser stops at a fixed nesting depth (``maxNesting``, 20 levels of
tokens: about ten nested lists, or twenty nested quotes) and silently drops everything
inside the container that went too deep -- in practice, often the rest of the message.
:func:`agent_markdown` finds the first container the parser opened at that depth and
shows the text from its line on as plain text below the markdown of the lines before.
"""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.markdown import Markdown
from rich.text import Text

__all__ = ["LineMarkdown", "agent_markdown"]

#: Tokens whose content the parser tokenizes one level deeper (and drops past the limit).
_CONTAINERS = frozenset(
    {"bullet_list_open", "ordered_list_open", "list_item_open", "blockquote_open"}
)
#: The parser's default ``maxNesting`` when its options do not say.
_DEFAULT_LIMIT = 20


class LineMarkdown(Markdown):
    """Markdown that keeps a single newline as a line break: agents write lists, steps
    and addresses one per line without CommonMark's blank line or trailing spaces, and
    joining those lines into one paragraph garbled them."""

    def __init__(self, markup: str, **options: Any) -> None:
        super().__init__(markup, **options)
        for token in self.parsed:
            for child in token.children or ():
                if child.type == "softbreak":
                    child.type = "hardbreak"


def agent_markdown(text: str) -> RenderableType:
    """``text`` (already sanitized) as markdown; from the first line the parser would
    drop for nesting too deep, the rest is plain text, never lost."""
    rendered = LineMarkdown(text, code_theme="ansi_dark", hyperlinks=False)
    cut = _too_deep_line(rendered)
    if cut is None:
        return rendered
    lines = text.split("\n")
    head = LineMarkdown("\n".join(lines[:cut]), code_theme="ansi_dark", hyperlinks=False)
    return Group(head, Text("\n".join(lines[cut:])))


def _too_deep_line(rendered: Markdown) -> int | None:
    """The source line of the first container opened at the last level the parser
    tokenizes (its content was dropped), or None when nothing was."""
    limit = _DEFAULT_LIMIT
    for token in rendered.parsed:
        if token.level >= limit - 1 and token.type in _CONTAINERS and token.map:
            return token.map[0]
    return None

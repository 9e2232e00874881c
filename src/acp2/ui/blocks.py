"""Timeline entries as rich renderables: messages, thoughts, tool calls, plans, notices,
and the permission request panel.

Pure functions of the reduced :class:`~acp2.state.SessionState`: they read it and build
renderables, nothing else, so they are tested by printing to a capture console. The same
functions draw the live region (``View.live``) and the settled log.

Agent text never becomes rich markup and never reaches the terminal unsanitized
(:mod:`acp2.sanitize`): messages are sanitized before markdown parsing, and markdown
links show their target next to their text (no OSC 8 hyperlinks, whose target is hidden).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.panel import Panel
from rich.syntax import Syntax
from rich.text import Text

from acp2 import sanitize
from acp2.client import PermissionRequest, describe
from acp2.client.describe import Seen
from acp2.client.permission_text import Asked, Offer, asked
from acp2.schema import Diff, SessionReference, Terminal
from acp2.state import (
    CompactionState,
    Entry,
    MessageState,
    PlanState,
    SessionMessageState,
    SessionState,
    TerminalState,
    ToolCallState,
)
from acp2.ui.markdown_text import LineMarkdown, agent_markdown
from acp2.ui.style import kind_icon, plan_mark, status_glyph
from acp2.ui.subagents import folded_lines

__all__ = [
    "LineMarkdown",
    "View",
    "entry_block",
    "message_block",
    "notice_block",
    "offers_text",
    "permission_block",
    "plan_block",
    "terminal_block",
    "thought_block",
    "tool_call_block",
]

#: Lines of a thought shown while it streams.
LIVE_THOUGHT_LINES = 4
#: Characters of a collapsed thought.
COLLAPSED_THOUGHT_CHARS = 68


@dataclass(frozen=True)
class View:
    """How to draw: ``live`` for the in-progress region, ``expand_thoughts`` to show
    thoughts in full once settled, ``output_lines`` of terminal and tool text kept,
    ``show_user`` False to leave out user messages (the prompt is already on screen),
    ``more_hint`` appended to the ``… N lines before`` line (the key that expands);
    ``seen`` is shared by the views of one chat (``dataclasses.replace`` keeps it)."""

    live: bool = False
    expand_thoughts: bool = False
    output_lines: int = 10
    show_user: bool = True
    more_hint: str = ""
    seen: Seen = field(default_factory=Seen)


def entry_block(entry: Entry, state: SessionState, view: View) -> RenderableType | None:
    """The renderable of any timeline entry (None when there is nothing to show yet)."""
    if isinstance(entry, MessageState):
        return message_block(entry, view)
    if isinstance(entry, ToolCallState):
        return tool_call_block(entry, state, view)
    if isinstance(entry, PlanState):
        return plan_block(entry)
    return _compaction_block(entry)


def message_block(message: MessageState, view: View) -> RenderableType | None:
    """A user message (``❯ text``), agent text as markdown, a thought, or a message
    between sessions (``⇄ a → b`` over its text, never markdown)."""
    text = sanitize.prose(message.text)
    if not text.strip():
        return None
    if message.kind == "thought":
        return thought_block(text, view)
    if message.kind == "user":
        if not view.show_user:
            return None
        return Text.assemble(("❯ ", "bold cyan"), (text, "bold"))
    if isinstance(message, SessionMessageState):
        label = describe.session_message_label(message)
        return Text.assemble(("⇄ ", "cyan"), (label, "dim"), "\n", text.strip())
    return agent_markdown(text)


def thought_block(thought: str, view: View) -> RenderableType:
    """A (sanitized) thought, dimmed: its last lines while live, one line when collapsed,
    else all."""
    text = thought.strip()
    if view.live:
        hidden, lines = describe.tail(text, LIVE_THOUGHT_LINES)
        shown = ("… " if hidden else "") + "\n".join(lines)
        return Text.assemble(("✻ ", "magenta"), (shown, "dim italic"))
    if view.expand_thoughts:
        return Text.assemble(("✻ ", "magenta"), (text, "dim italic"))
    first = " ".join(text.split())
    if len(first) > COLLAPSED_THOUGHT_CHARS:
        first = first[: COLLAPSED_THOUGHT_CHARS - 1].rstrip() + "…"
    return Text.assemble(
        ("✻ ", "magenta"), (first, "dim italic"), no_wrap=True, overflow="ellipsis"
    )


def tool_call_block(call: ToolCallState, state: SessionState, view: View) -> RenderableType:
    """``✓ ✎ Edit file`` with its content below: text, highlighted diffs, terminals, the
    child sessions it references (:func:`acp2.ui.subagents.folded_lines`)."""
    glyph, style = status_glyph(call.status)
    header = Text.assemble(
        (glyph, style),
        " ",
        (kind_icon(call.kind), "cyan"),
        " ",
        (describe.tool_title(call), "bold"),
    )
    if call.status in ("failed", "cancelled"):
        header.append(f"  {call.status}", style=style)
    parts: list[RenderableType] = [header]
    command = describe.shown_command(call)
    if command is not None:
        line = Text.assemble(("$ ", "bold green"), (command, "bold"))
        parts.append(Padding(line, (0, 0, 0, 2)))
    summarized = view.seen.summarized(call)
    for item in describe.content_items(call):
        if summarized and isinstance(item, Diff):
            block: Any = Text(describe.diff_summary(item, view.seen.root), style="yellow")
        else:
            block = _content_block(
                item, state, view, call.status == "failed", describe.tool_title(call)
            )
        if block is not None:
            parts.append(Padding(block, (0, 0, 0, 2)))
    return Group(*parts)


def _lines(count: int) -> str:
    return f"{count} line" if count == 1 else f"{count} lines"


def _content_block(item: Any, state: SessionState, view: View, failed: bool, title: str) -> Any:
    if isinstance(item, Diff):
        return diff_block(item, view.seen.root)
    if isinstance(item, Terminal):
        term = state.terminals.get(item.terminal_id) or TerminalState(item.terminal_id)
        return terminal_block(term, view, title=title)
    if isinstance(item, SessionReference):  # a child folded under the call that runs it
        return Text("\n".join(folded_lines(item, state, view.seen.children)), style="dim")
    text = describe.block_text(item)
    if not text.strip():
        return None
    hidden, lines = describe.tail(text, view.output_lines)
    body = Text("\n".join(lines), style="red" if failed else "dim")
    more = Text(f"… {_lines(hidden)} before{view.more_hint}", style="dim")
    return Group(more, body) if hidden else body


def diff_block(diff: Diff, root: str | None = None) -> RenderableType:
    """A diff: its patch syntax-highlighted, else the list of changed paths (relative to
    ``root``)."""
    patch = describe.diff_patch(diff, root)
    if patch is None:
        return Text("\n".join(describe.diff_changes(diff, root)), style="yellow")
    return Syntax(
        patch.rstrip("\n"),
        "diff",
        theme="ansi_dark",
        background_color="default",
        word_wrap=True,
    )


def terminal_block(term: TerminalState, view: View, *, title: str = "") -> RenderableType:
    """``$ command`` (unless it is the tool call's ``title``), the last lines of the
    output (SGR colours kept, every other escape sequence removed), the exit status."""
    parts: list[RenderableType] = []
    command = sanitize.exact(term.command or "")
    if command and command != title:
        parts.append(Text.assemble(("$ ", "bold green"), (command, "bold")))
    hidden, lines = describe.tail(sanitize.terminal(term.text, colors=True), view.output_lines)
    if hidden:
        parts.append(Text(f"… {_lines(hidden)} before{view.more_hint}", style="dim"))
    if lines:
        output = Text.from_ansi("\n".join(lines))
        output.no_wrap, output.overflow = True, "ellipsis"
        parts.append(output)
    ended = describe.exit_text(term)
    if ended is not None:
        ok = ended == "exit 0"
        parts.append(Text(ended, style="green" if ok else "red"))
    return Group(*parts)


def plan_block(plan: PlanState) -> RenderableType:
    """The plan as a checklist (an unknown plan type as one line)."""
    entries = plan.entries
    if not entries:
        return Text("☰ plan (unsupported format)", style="dim")
    lines = [Text("☰ Plan", style="bold")]
    for entry in entries:
        mark, style = plan_mark(str(entry.status))
        text_style = "dim" if entry.status in ("completed", "cancelled") else ""
        content = sanitize.line(str(entry.content))
        lines.append(Text.assemble("  ", (mark, style), " ", (content, text_style)))
    return Group(*lines)


def notice_block(notice: Any) -> RenderableType:
    """A notice: ``! title`` coloured by severity, then its description."""
    severity = str(getattr(notice, "severity", "info"))
    style = {"error": "red", "warning": "yellow"}.get(severity, "blue")
    text = Text.assemble(("! ", style), (sanitize.line(str(notice.title)), "bold"))
    description = getattr(notice, "description", None)
    if isinstance(description, str) and description:
        text.append("\n  " + sanitize.prose(description))
    return text


def _compaction_block(comp: CompactionState) -> RenderableType:
    summary = "".join(describe.block_text(block) for block in comp.summary).strip()
    status = sanitize.line(str(comp.status))
    text = Text.assemble(("⟲ ", "blue"), (f"context compacted ({status})", "dim"))
    if comp.error:
        text.append(f": {sanitize.prose(str(comp.error))}", style="red")
    elif summary:
        text.append(f": {summary}", style="dim italic")
    return text


def _offer_style(offer: Offer) -> str:
    return "green" if offer.allows else "red" if offer.rejects else ""


def offers_text(shown: Asked, selected: int | None = None) -> Text:
    """The options on one line: `` y  Allow once   a  Always allow   n  Reject``; the
    ``selected`` index (arrow keys) drawn reversed."""
    text = Text()
    for index, offer in enumerate(shown.offers):
        text.append(" " if index else "")
        text.append(f" {offer.key} ", style="bold reverse")
        label_style = _offer_style(offer) + (" reverse" if index == selected else "")
        text.append(f" {offer.label}", style=label_style.strip())
        if offer.agent_name:
            text.append(f' ("{offer.agent_name}")', style="dim")
        text.append(" ")
    return text


def permission_block(request: PermissionRequest, *, options: bool = True) -> RenderableType:
    """The request as a panel: the agent's title and description, what will run (the
    command, exactly), the diffs, the raw input in one line, and the options with keys.
    A title that does not mention the command to run gets a warning."""
    shown = asked(request)
    parts: list[RenderableType] = [Text(shown.title, style="bold")]
    if shown.description:
        parts.append(Text(shown.description))
    if shown.mismatch:
        parts.append(
            Text("⚠ the title does not match the command that will run:", style="bold red")
        )
    for command, cwd in shown.commands:
        line = Text.assemble(("$ ", "bold green"), (command, "bold"))
        if cwd:
            line.append(f"  in {cwd}", style="dim")
        parts.append(line)
    call = request.tool_call
    subject = None if call is None else _subject_block(call, request.session.state, shown)
    if call is not None and subject is not None and (call.content or not shown.commands):
        parts.append(subject)
    if shown.raw_input is not None:
        parts.append(Text(f"raw input: {shown.raw_input}", style="dim"))  # wraps: 240 chars
    if options:
        parts.append(Text.assemble("\n", offers_text(shown)))
    return Panel(
        Group(*parts), title="permission requested", title_align="left", border_style="yellow"
    )


def _said(item: Any, shown: Asked) -> bool:
    """A text item of the tool call that repeats the request's description or command."""
    if isinstance(item, Diff):
        return False
    text = " ".join(sanitize.prose(describe.block_text(item)).split())
    said = [shown.description or "", *(f"$ {command}" for command, _ in shown.commands)]
    return bool(text) and any(text == " ".join(other.split()) for other in said)


def _subject_block(call: ToolCallState, state: SessionState, shown: Asked) -> RenderableType | None:
    """The tool call a request is about: ``✎ Edit a.py``, its diffs and text content."""
    title = describe.tool_title(call)
    header = Text.assemble((kind_icon(call.kind), "cyan"), " ", (title, "dim"))
    # A header that repeats the request's title or command is left out (said once).
    said = [shown.title, *(command for command, _ in shown.commands)]
    repeated = any(" ".join(title.split()) in " ".join(text.split()) for text in said)
    parts: list[RenderableType] = [] if repeated and shown.commands else [header]
    view = View(seen=Seen(root=shown.root))
    for item in describe.content_items(call):
        if isinstance(item, Terminal) or _said(item, shown):
            continue
        block = _content_block(item, state, view, False, "")
        if block is not None:
            parts.append(Padding(block, (0, 0, 0, 2)))
    return Padding(Group(*parts), (1, 0, 0, 0)) if parts else None  # None: all said above

"""Plain facts about entries, shared by the rich and the plain renderers (no styling).

Each helper reads the reduced state and returns strings; unknown protocol values
(``msgspec.Raw`` content, unknown statuses) become a short neutral description.
"""

from __future__ import annotations

from typing import Any

from msgspec import UNSET, Raw

from acp2.schema import (
    AudioContent,
    Content,
    Diff,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    Terminal,
    TextContent,
)
from acp2.state import SessionState, TerminalState, ToolCallState

__all__ = [
    "block_text",
    "content_items",
    "diff_changes",
    "diff_patch",
    "error_message",
    "exit_text",
    "tail",
    "terminals_of",
    "tool_title",
]


def block_text(block: Any) -> str:
    """The text of one content block; other blocks as a bracketed one-line summary."""
    if isinstance(block, TextContent):
        return block.text
    if isinstance(block, ImageContent):
        return f"[image {block.mime_type}]"
    if isinstance(block, AudioContent):
        return f"[audio {block.mime_type}]"
    if isinstance(block, ResourceLink):
        return f"[link {block.name}: {block.uri}]"
    if isinstance(block, EmbeddedResource):
        text = block.resource.text
        return text if isinstance(text, str) else f"[resource {block.resource.uri}]"
    return "[unsupported content]"


def tool_title(call: ToolCallState) -> str:
    """The tool call's title, else its tool name, else its id."""
    return call.title or call.name or call.tool_call_id


def diff_patch(diff: Diff) -> str | None:
    """The diff's textual patch, when it has one."""
    patch = diff.patch
    if patch is None or patch is UNSET:
        return None
    text = getattr(patch, "text", None)
    return text if isinstance(text, str) and text.strip() else None


def diff_changes(diff: Diff) -> list[str]:
    """One line per changed path: ``modify /abs/path``, ``move /a -> /b``."""
    lines = []
    for change in diff.changes:
        if isinstance(change, Raw):
            lines.append("(unknown change)")
            continue
        operation = type(change).__name__.removeprefix("Diff").removesuffix("Change").lower()
        old = getattr(change, "old_path", None)
        where = f"{old} -> {change.path}" if isinstance(old, str) else change.path
        lines.append(f"{operation} {where}")
    return lines


def exit_text(term: TerminalState) -> str | None:
    """``exit 0`` / ``killed by SIGTERM`` / ``exited`` once the terminal exited, else None."""
    status = term.exit_status
    if status is None:
        return None
    code = getattr(status, "exit_code", None)
    signal = getattr(status, "signal", None)
    if isinstance(signal, str) and signal:
        return f"killed by {signal}"
    return f"exit {code}" if isinstance(code, int) else "exited"


def tail(text: str, limit: int) -> tuple[int, list[str]]:
    """The last ``limit`` lines of ``text`` and how many lines were left out before them."""
    lines = text.rstrip("\n").split("\n") if text.strip("\n") else []
    hidden = max(0, len(lines) - limit)
    return hidden, lines[hidden:]


def terminals_of(call: ToolCallState, state: SessionState) -> list[TerminalState]:
    """The terminals a tool call shows, in content order (empty ones if not seen yet)."""
    return [
        state.terminals.get(item.terminal_id) or TerminalState(item.terminal_id)
        for item in call.content
        if isinstance(item, Terminal)
    ]


def content_items(call: ToolCallState) -> list[Any]:
    """The tool call's content, with ``content`` wrappers unwrapped to their blocks."""
    return [item.content if isinstance(item, Content) else item for item in call.content]


def error_message(error: Any) -> str | None:
    """The ``message`` of an idle's ``error`` object (a model or a plain dict), if any."""
    message = error.get("message") if isinstance(error, dict) else getattr(error, "message", None)
    return message if isinstance(message, str) and message else None

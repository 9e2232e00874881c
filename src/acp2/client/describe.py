"""Plain facts about entries, shared by the rich and the plain renderers (no styling).

Each helper reads the reduced state and returns strings; unknown protocol values
(``msgspec.Raw`` content, unknown statuses) become a short neutral description. Every
string that comes from the agent is returned sanitized (:mod:`acp2.sanitize`): text
for reading as :func:`~acp2.sanitize.prose`, titles as
:func:`~acp2.sanitize.line`, paths and patches as :func:`~acp2.sanitize.exact`.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from msgspec import UNSET, Raw

from acp2 import sanitize
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
from acp2.state import SessionMessageState, SessionState, TerminalState, ToolCallState

__all__ = [
    "Seen",
    "block_text",
    "content_items",
    "diff_changes",
    "diff_patch",
    "diff_stats",
    "diff_summary",
    "error_message",
    "exit_text",
    "raw_command",
    "relative",
    "session_message_label",
    "shown_command",
    "tail",
    "terminals_of",
    "tool_title",
]


@dataclass(eq=False)
class Seen:
    """What the person already saw, shared by the views of one chat: the session ``root``
    that paths are shown relative to, and the tool calls whose diffs were shown in full
    in a permission prompt (drawn afterwards as a ``+3 -1`` summary, not a second time).
    ``children`` is the shown session's live child sessions by id (``session.children``),
    whose latest text a child folded under its tool call quotes."""

    root: str | None = None
    diffs: set[str] = field(default_factory=set)
    children: Mapping[str, Any] = field(default_factory=dict)

    def summarized(self, call: ToolCallState) -> bool:
        """True when ``call``'s diffs were already shown in full."""
        return call.tool_call_id in self.diffs


def diff_summary(diff: Diff, root: str | None = None) -> str:
    """``mathkit/series.py +3 -1``: the changed paths and the patch's line counts."""
    paths = ", ".join(line.split(" ", 1)[-1] for line in diff_changes(diff, root))
    stats = diff_stats(diff)
    counts = f" +{stats[0]} \u2212{stats[1]}" if stats is not None else ""
    return (paths or "(no paths)") + counts


def block_text(block: Any) -> str:
    """The text of one content block (sanitized); other blocks as a bracketed one-line
    summary."""
    if isinstance(block, TextContent):
        return sanitize.prose(block.text)
    if isinstance(block, ImageContent):
        return sanitize.line(f"[image {block.mime_type}]")
    if isinstance(block, AudioContent):
        return sanitize.line(f"[audio {block.mime_type}]")
    if isinstance(block, ResourceLink):
        return sanitize.line(f"[link {block.name}: {block.uri}]")
    if isinstance(block, EmbeddedResource):
        text = block.resource.text
        if isinstance(text, str):
            return sanitize.prose(text)
        return sanitize.line(f"[resource {block.resource.uri}]")
    return "[unsupported content]"


def raw_command(raw: Any) -> str | None:
    """The shell command in a tool call's raw input (``command`` / ``cmd`` /
    ``commandLine``, a string or an argv list), unsanitized; None when there is none."""
    if not isinstance(raw, dict):
        return None
    for key in ("command", "cmd", "commandLine"):
        value = raw.get(key)
        if isinstance(value, str) and value.strip():
            return value
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            return shlex.join(value)
    return None


def shown_command(call: ToolCallState) -> str | None:
    """The raw input's command, shown exactly, when the title does not already say it
    (so a tool card never shows only the agent's description of what runs)."""
    command = raw_command(call.raw_input)
    if command is None:
        return None
    shown = sanitize.exact(command)
    return None if " ".join(shown.split()) in " ".join(tool_title(call).split()) else shown


def tool_title(call: ToolCallState) -> str:
    """The tool call's title, else its tool name, else its id (one sanitized line)."""
    return sanitize.line(call.title or call.name or call.tool_call_id)


def session_message_label(message: SessionMessageState) -> str:
    """``sess_a → sess_b``: the sessions a message between sessions went between (each
    sanitized; ``?`` when not reported), so it is never read as the agent's own words."""
    sender = sanitize.line(message.sender_session_id or "?")
    recipient = sanitize.line(message.recipient_session_id or "?")
    return f"{sender} \u2192 {recipient}"


def relative(path: str, root: str | None) -> str:
    """``path`` relative to ``root`` when it is inside it, else ``path`` unchanged."""
    if not root:
        return path
    base = root.rstrip("/") + "/"
    return path[len(base) :] if path.startswith(base) and len(path) > len(base) else path


def diff_patch(diff: Diff, root: str | None = None) -> str | None:
    """The diff's textual patch, when it has one: headers relative to ``root``
    (``--- a/src/x.py``), every special character shown (:func:`sanitize.exact`)."""
    patch = diff.patch
    if patch is None or patch is UNSET:
        return None
    text = getattr(patch, "text", None)
    if not isinstance(text, str) or not text.strip():
        return None
    return sanitize.exact(_relative_headers(text, root) if root else text)


def _relative_headers(patch: str, root: str) -> str:
    base = root.rstrip("/") + "/"
    lines = patch.split("\n")
    in_header = True
    for number, text in enumerate(lines):
        if text.startswith("diff --git "):
            in_header = True
            lines[number] = text.replace(base, "a/", 1).replace(base, "b/", 1)
        elif text.startswith("@@"):
            in_header = False
        elif in_header and text.startswith(("--- ", "+++ ")):
            side = "a/" if text.startswith("-") else "b/"
            lines[number] = text[:4] + (
                side + text[4 + len(base) :] if text[4:].startswith(base) else text[4:]
            )
    return "\n".join(lines)


def diff_stats(diff: Diff) -> tuple[int, int] | None:
    """Lines added and removed by the diff's patch (None without a patch)."""
    patch = diff_patch(diff)
    if patch is None:
        return None
    added = removed = 0
    for text in patch.split("\n"):
        if text.startswith("+") and not text.startswith("+++ "):
            added += 1
        elif text.startswith("-") and not text.startswith("--- "):
            removed += 1
    return added, removed


def diff_changes(diff: Diff, root: str | None = None) -> list[str]:
    """One line per changed path: ``modify src/x.py``, ``move a.py -> b.py`` (relative to
    ``root`` when inside it; shown exactly)."""
    lines = []
    for change in diff.changes:
        if isinstance(change, Raw):
            lines.append("(unknown change)")
            continue
        operation = type(change).__name__.removeprefix("Diff").removesuffix("Change").lower()
        old = getattr(change, "old_path", None)
        path = relative(change.path, root)
        where = f"{relative(old, root)} -> {path}" if isinstance(old, str) else path
        lines.append(sanitize.line(f"{operation} {where}"))
    return lines


def exit_text(term: TerminalState) -> str | None:
    """``exit 0`` / ``killed by SIGTERM`` / ``exited`` once the terminal exited, else None."""
    status = term.exit_status
    if status is None:
        return None
    code = getattr(status, "exit_code", None)
    signal = getattr(status, "signal", None)
    if isinstance(signal, str) and signal:
        return f"killed by {sanitize.line(signal)}"
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
    """The ``message`` of an idle's ``error`` object (a model or a plain dict), if any,
    sanitized."""
    message = error.get("message") if isinstance(error, dict) else getattr(error, "message", None)
    return sanitize.prose(message) if isinstance(message, str) and message else None

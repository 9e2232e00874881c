"""Timeline entries as plain text: the transcript printed when stdout is not a terminal.

No colours, no cursor movement, ASCII structure (agent text is printed sanitized by
:mod:`acp2.sanitize`: no escape sequence or control character of the agent's gets
through), so the transcript reads well in a log and is easy to grep in tests::

    > fix the failing test
    (thinking) Before changing anything I should look around.
    Let me look around the workspace first.
    [search] List ** in . (completed)
    [plan]
      [x] Look around the workspace
      [ ] Run the tests
    usage: ctx 1.3k/128k (1%)
    [stop: end_turn]
"""

from __future__ import annotations

from typing import Any

from acp2 import sanitize
from acp2.client import describe
from acp2.client.describe import Seen
from acp2.schema import Diff, SessionReference, Terminal
from acp2.state import (
    Entry,
    MessageState,
    PlanState,
    SessionMessageState,
    SessionState,
    TerminalState,
    ToolCallState,
)
from acp2.ui.style import PLAIN_PLAN_MARKS, usage_text
from acp2.ui.subagents import folded_lines

__all__ = [
    "OUTPUT_LINES",
    "entry_text",
    "message_text",
    "notice_text",
    "plan_text",
    "stop_text",
    "terminal_text",
    "tool_call_text",
    "usage_line",
]

#: Lines of tool text and terminal output kept in the transcript (the tail).
OUTPUT_LINES = 40
_INDENT = "    "


def entry_text(
    entry: Entry, state: SessionState, *, show_user: bool = True, seen: Seen | None = None
) -> str | None:
    """The transcript text of a timeline entry, without a final newline (None: nothing).
    ``seen``: the session root and the diffs already shown in a permission request."""
    if isinstance(entry, MessageState):
        return message_text(entry, show_user=show_user)
    if isinstance(entry, ToolCallState):
        return tool_call_text(entry, state, seen)
    if isinstance(entry, PlanState):
        return plan_text(entry)
    error = f" {sanitize.prose(str(entry.error))}" if entry.error else ""
    return f"[compaction {sanitize.line(str(entry.status))}]{error}"


def message_text(message: MessageState, *, show_user: bool = True) -> str | None:
    """``> prompt`` for a user message, ``(thinking) ...`` for a thought, ``[message a → b]
    ...`` for a message between sessions, else the text."""
    text = sanitize.prose(message.text).strip("\n")
    if not text.strip():
        return None
    if message.kind == "user":
        return "> " + text if show_user else None
    if message.kind == "thought":
        return "(thinking) " + text.strip()
    if isinstance(message, SessionMessageState):
        return f"[message {describe.session_message_label(message)}] {text.strip()}"
    return text


def tool_call_text(call: ToolCallState, state: SessionState, seen: Seen | None = None) -> str:
    """``[kind] title (status)``, then its content indented: text, diffs (a ``+3 -1``
    summary when ``seen`` says the diff was shown in full already), terminals, the child
    sessions it references (:func:`acp2.ui.subagents.folded_lines`)."""
    kind, status = sanitize.line(str(call.kind)), sanitize.line(str(call.status))
    lines = [f"[{kind}] {describe.tool_title(call)} ({status})"]
    command = describe.shown_command(call)
    if command is not None:
        lines.extend(_indent(f"$ {command}"))
    seen = seen or Seen()
    for item in describe.content_items(call):
        if isinstance(item, Diff) and seen.summarized(call):
            lines.extend(_indent(describe.diff_summary(item, seen.root)))
        elif isinstance(item, SessionReference):  # a child folded under its call
            lines.extend(_indent("\n".join(folded_lines(item, state, seen.children))))
        else:
            lines.extend(_indent(_content_text(item, state, seen.root)))
    return "\n".join(lines)


def _content_text(item: Any, state: SessionState, root: str | None = None) -> str:
    if isinstance(item, Diff):
        patch = describe.diff_patch(item, root)
        return patch.rstrip("\n") if patch else "\n".join(describe.diff_changes(item, root))
    if isinstance(item, Terminal):
        term = state.terminals.get(item.terminal_id) or TerminalState(item.terminal_id)
        return terminal_text(term)
    return _tail_text(describe.block_text(item))


def terminal_text(term: TerminalState) -> str:
    """``$ command``, the output (its last lines, escape codes removed), ``exit N``."""
    lines = [f"$ {sanitize.exact(term.command)}"] if term.command else []
    output = _tail_text(sanitize.terminal(term.text))
    if output:
        lines.append(output)
    ended = describe.exit_text(term)
    if ended is not None:
        lines.append(f"[{ended}]")
    return "\n".join(lines)


def plan_text(plan: PlanState) -> str:
    """``[plan]`` and one ``[x] step`` line per entry."""
    if not plan.entries:
        return "[plan] (unsupported format)"
    lines = ["[plan]"]
    for entry in plan.entries:
        status = str(entry.status)
        mark = PLAIN_PLAN_MARKS.get(status, f"[{sanitize.line(status)}]")
        lines.append(f"  {mark} {sanitize.line(str(entry.content))}")
    return "\n".join(lines)


def usage_line(state: SessionState) -> str | None:
    """``usage: ctx 1.3k/128k (1%) · $0.01`` when the agent reported usage."""
    text = usage_text(state.usage)
    return f"usage: {text}" if text else None


def stop_text(reason: str | None, error: Any = None) -> str:
    """``[stop: end_turn]``; with the agent's error message when there is one."""
    message = describe.error_message(error)
    detail = f" - {message}" if message else ""
    return f"[stop: {sanitize.line(reason or 'unknown')}{detail}]"


def notice_text(notice: Any) -> str:
    """``[notice warning] title: description``."""
    description = getattr(notice, "description", None)
    tail = (
        f": {sanitize.prose(description)}" if isinstance(description, str) and description else ""
    )
    severity = sanitize.line(str(getattr(notice, "severity", "info")))
    return f"[notice {severity}] {sanitize.line(str(notice.title))}{tail}"


def _tail_text(text: str) -> str:
    hidden, lines = describe.tail(text, OUTPUT_LINES)
    return "\n".join(([f"... {hidden} earlier lines"] if hidden else []) + lines)


def _indent(text: str) -> list[str]:
    return [_INDENT + line if line else "" for line in text.split("\n")] if text else []

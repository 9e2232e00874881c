"""The chat's view of child sessions (Preview subagents), folded to a few lines.

A child's own transcript stays in its session (``session.children``). A child that a tool
call of the parent references (Preview ``session`` tool-call content, sent by
``spawn_child(..., tool_call=...)`` for instance) is drawn inside that call's block, two
lines under its title (:func:`folded_lines`)::

    ✓ ⚙ Ask the helper
      ↳ Researcher -- reads the docs
        end_turn -- Found three pages.

Any other child gets a line of its own when it appears and each time it goes idle
(:class:`SubagentTracker`): ``↳ Researcher started -- reads the docs`` ...
``↳ Researcher: end_turn -- Found three pages.`` (its latest agent message, first line).
Every text is the agent's and sanitized.

The folded view expands on demand: ``/subagents`` lists the children, numbered
(:func:`listing`), ``/subagent N`` prints child N's whole transcript (:func:`expanded`:
its messages, messages between sessions labelled with where they went, one line per
tool call), ``/cancel-subagent N`` cancels child N's work when the agent advertised
``cancel`` for it (:func:`pick`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from acp2.sanitize import line, prose
from acp2.schema import SessionReference
from acp2.state.entities import MessageState, SessionMessageState, ToolCallState
from acp2.ui.choose import picked

__all__ = [
    "EXCERPT",
    "SubagentTracker",
    "expanded",
    "folded_lines",
    "listing",
    "pick",
    "referenced",
]

#: The longest excerpt of a child's message shown on its line.
EXCERPT: Final = 80


class SubagentTracker:
    """Hands out each new child and state change once (:meth:`take`), for the children
    no tool call references (those are drawn inside the call, :func:`folded_lines`)."""

    def __init__(self) -> None:
        self._seen: dict[str, tuple[Any, Any]] = {}

    def take(self, session: Any) -> list[str]:
        """Lines for what changed among ``session``'s children since the last call."""
        if session is None:
            return []
        lines = []
        folded = referenced(session.state)
        children = getattr(session, "children", {})
        for child_id, entry in session.state.subagents.items():
            if child_id in folded:
                continue
            state, stop = _state(entry)
            before = self._seen.get(child_id)
            if before is None:
                lines.append(f"↳ {_name(entry)} started{_about(entry)}")
                before = (None, None)
            if (state, stop) != before and state == "idle":
                excerpt = _excerpt(children.get(child_id))
                lines.append(f"↳ {_name(entry)}: {line(stop or 'idle')}{excerpt}")
            self._seen[child_id] = (state, stop)
        return lines


def referenced(state: Any) -> set[str]:
    """The ids of the children of ``state`` that some tool call's content references."""
    if not state.subagents:
        return set()  # the common case, without a walk over every tool call's content
    found: set[str] = {
        item.session_id
        for call in state.tool_calls.values()
        for item in call.content
        if isinstance(item, SessionReference)
    }
    return found & set(state.subagents)


def folded_lines(item: SessionReference, state: Any, children: Mapping[str, Any]) -> list[str]:
    """The lines a tool call shows for its ``session`` content ``item``: for a child of
    ``state``, ``↳ name -- description`` and its current state (the stop reason and the
    child's latest message once idle; nothing while unreported); ``↳ session <id>`` for
    any other session. ``children`` maps ids to the live child sessions (for the excerpt)."""
    entry = state.subagents.get(item.session_id)
    if entry is None:
        return [f"↳ session {line(item.session_id)}"]
    head = f"↳ {_name(entry)}{_about(entry)}"
    status, stop = _state(entry)
    if status is None:
        return [head]
    if status != "idle":
        return [head, f"  {line(str(status))}"]
    return [head, f"  {line(stop or 'idle')}{_excerpt(children.get(item.session_id))}"]


def _name(entry: Any) -> str:
    return line(entry.title or "") or line(entry.session_id)


def _about(entry: Any) -> str:
    return f" -- {line(entry.description)}" if entry.description else ""


def _state(entry: Any) -> tuple[Any, Any]:
    return getattr(entry.state, "state", None), getattr(entry.state, "stop_reason", None)


def _excerpt(child: Any) -> str:
    if child is None:
        return ""
    texts = [m.text for m in child.state.messages.values() if m.kind == "agent" and m.text]
    if not texts:
        return ""
    first = line(texts[-1].strip().splitlines()[0] if texts[-1].strip() else "")
    if len(first) > EXCERPT:
        first = first[: EXCERPT - 1] + "…"
    return f" -- {first}" if first else ""


def _children(session: Any) -> list[Any]:
    return list(getattr(session, "children", {}).values())


def _status(child: Any) -> str:
    entry = child.entry
    status, stop = _state(entry) if entry is not None else (None, None)
    if status is None:
        return "not reported"
    return line(str(stop or status)) if status == "idle" else line(str(status))


def listing(session: Any) -> list[str]:
    """The lines ``/subagents`` prints: one per child of ``session``, numbered from 1 in
    the order they were announced, with its state and how to expand or cancel it."""
    children = _children(session)
    if not children:
        return ["this session has no subagents"]
    lines = []
    for number, child in enumerate(children, 1):
        entry = child.entry
        name = f"{_name(entry)}{_about(entry)}" if entry is not None else line(child.id)
        hint = f"/subagent {number}"
        hint += f", /cancel-subagent {number}" if child.may_cancel else ""
        lines.append(f" {number:>2} ↳ {name}  {_status(child)}  ({hint})")
    return lines


def pick(session: Any, arg: str, command: str) -> tuple[Any | None, str]:
    """The child ``/command arg`` names (None, with why, for a bad number) and its name."""
    children = _children(session)
    index = picked(arg.strip(), len(children))
    if index is None:
        if not children:
            return None, "this session has no subagents"
        return None, f"usage: /{command} N, N from 1 to {len(children)} (/subagents lists them)"
    child = children[index]
    entry = child.entry
    return child, _name(entry) if entry is not None else line(child.id)


def expanded(child: Any) -> list[str]:
    """Child ``child``'s transcript, unfolded: a header, then each message (an agent
    message as its text, a message between sessions as ``[message a → b] text``) and
    each tool call (``⚙ title (status)``), in order; every text sanitized."""
    entry = child.entry
    head = f"↳ {_name(entry)}{_about(entry)}" if entry is not None else f"↳ {line(child.id)}"
    lines = [f"{head}  {_status(child)}"]
    for item in child.state.timeline:
        if isinstance(item, SessionMessageState):
            sender = line(item.sender_session_id or "?")
            recipient = line(item.recipient_session_id or "?")
            lines.append(f"  [message {sender} → {recipient}] {prose(item.text)}")
        elif isinstance(item, MessageState) and item.kind in ("agent", "user"):
            lines.append(f"  {'you: ' if item.kind == 'user' else ''}{prose(item.text)}")
        elif isinstance(item, ToolCallState):
            lines.append(f"  ⚙ {line(item.title or item.tool_call_id)} ({line(item.status)})")
    if len(lines) == 1:
        lines.append("  (nothing yet)")
    return lines

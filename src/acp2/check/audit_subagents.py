"""The subagent rules of the Completed Subagent Sessions RFD, judged over every frame.

* SS-30: a ``subagent_update`` names its child by a string ``sessionId`` other than the
  id it arrives under (its parent's), and the first one comes before any update bearing
  the child's id (the client cannot place a child's update it was never told about).
* SS-31: messages between sessions: a ``session_message_chunk`` carries one content
  block and a string ``messageId``; a ``session_message`` upsert has a string
  ``messageId`` and ``content`` that is an array, null or omitted.
* SS-32: tool-call content ``{type: "session", sessionId}`` names a session the client
  knows: one a result of ours named (``session/new``, ``session/fork``, a list), the
  session the update arrives under, or a child announced before the reference.

Ids are per connection, so each link is judged on its own. An agent that never uses
subagents passes every row vacuously, with a reason saying so.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from acp2.check.audit_base import Row, evidence
from acp2.check.driver import ClientCore
from acp2.check.frames import Frame, is_response, session_update
from acp2.check.probes.base import Shared

__all__ = ["SUBAGENT_ROWS", "subagents"]

SUBAGENT_ROWS = ("SS-30", "SS-31", "SS-32")
_MESSAGES = frozenset({"session_message", "session_message_chunk"})
_TOOL_KINDS = frozenset({"tool_call_update", "tool_call_content_chunk"})


@dataclass
class _Link:
    """What one connection has told the client so far."""

    opened: set[str] = field(default_factory=set)
    announced: set[str] = field(default_factory=set)
    #: The first update under each id neither opened nor announced yet.
    early: dict[str, Frame] = field(default_factory=dict)


@dataclass
class _Rows:
    announce: Row
    shapes: Row
    links: Row
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(SUBAGENT_ROWS, 0))


def subagents(shared: Shared) -> None:
    """Record SS-30, SS-31 and SS-32 for every link of the run."""
    rows = _Rows(Row(shared, "SS-30"), Row(shared, "SS-31"), Row(shared, "SS-32"))
    for link in shared.links:
        state = _Link()
        for frame in link.frames:
            _frame(rows, link, state, frame)
    n = rows.counts
    rows.announce.finish(
        f"{n['SS-30']} subagent_update(s), each naming a child announced before its updates"
        if n["SS-30"]
        else "no subagent updates"
    )
    rows.shapes.finish(
        f"{n['SS-31']} session message update(s), all well-formed"
        if n["SS-31"]
        else "no session messages"
    )
    rows.links.finish(
        f"{n['SS-32']} session reference(s), each to a known session"
        if n["SS-32"]
        else "no session references in tool calls"
    )


def _frame(rows: _Rows, link: ClientCore, state: _Link, frame: Frame) -> None:
    value = frame.value
    if is_response(value) and isinstance(result := value.get("result"), dict):
        state.opened.update(_result_ids(result))
        return
    update = session_update(value)
    if update is None:
        return
    sid = value["params"].get("sessionId")
    kind = update.get("sessionUpdate")
    if kind == "subagent_update":
        rows.counts["SS-30"] += 1
        _announce(rows.announce, link, state, frame, (sid, update.get("sessionId")))
        return
    if isinstance(sid, str) and sid not in state.opened and sid not in state.announced:
        state.early.setdefault(sid, frame)
    if kind in _MESSAGES:
        rows.counts["SS-31"] += 1
        if problem := _message_problem(kind, update):
            rows.shapes.add(problem, evidence(link, frame, problem))
    elif kind in _TOOL_KINDS:
        _references(rows, link, state, frame, (sid, update))


def _result_ids(result: dict[str, Any]) -> set[str]:
    """The session ids a result names: its own ``sessionId`` and a list's entries."""
    ids = {result["sessionId"]} if isinstance(result.get("sessionId"), str) else set()
    listed = result.get("sessions")
    for entry in listed if isinstance(listed, list) else []:
        if isinstance(entry, dict) and isinstance(entry.get("sessionId"), str):
            ids.add(entry["sessionId"])
    return ids


def _announce(row: Row, link: ClientCore, state: _Link, frame: Frame, ids: tuple[Any, Any]) -> None:
    parent, child = ids
    if not isinstance(child, str):
        row.add("a subagent_update without a string sessionId", evidence(link, frame))
    elif child == parent:
        why = f"subagent_update names its parent's own id {child!r} as the child"
        row.add(why, evidence(link, frame, why))
    elif child not in state.announced and (early := state.early.get(child)) is not None:
        why = f"child {child!r} had updates before its subagent_update announced it"
        row.add(why, evidence(link, early, why))
    if isinstance(child, str) and child != parent:
        state.announced.add(child)


def _message_problem(kind: str, update: dict[str, Any]) -> str | None:
    """Why a session message update is malformed (SS-31), or None."""
    if not isinstance(update.get("messageId"), str):
        return f"{kind} without a string messageId"
    content = update.get("content")
    if kind == "session_message_chunk":
        if not (isinstance(content, dict) and isinstance(content.get("type"), str)):
            return "session_message_chunk: content must be one block object"
    elif content is not None and not isinstance(content, list):
        return "session_message: content must be an array, null or omitted"
    return None


def _references(
    rows: _Rows, link: ClientCore, state: _Link, frame: Frame, where: tuple[Any, dict[str, Any]]
) -> None:
    sid, update = where
    content = update.get("content")
    items = content if isinstance(content, list) else [content]
    for item in items:
        if not (isinstance(item, dict) and item.get("type") == "session"):
            continue
        rows.counts["SS-32"] += 1
        target = item.get("sessionId")
        if target != sid and target not in state.opened and target not in state.announced:
            why = f"session content names {target!r}, a session never opened nor announced"
            rows.links.add(why, evidence(link, frame, why))

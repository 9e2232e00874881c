"""Replay: fold a session's stored updates into the few updates that rebuild it.

Stored history is every update the agent sent, chunks included. Replaying 100 000 chunks
one by one would be slow and noisy, so the history is reduced with the same pure reducer
clients use (:mod:`acp2.state`) and rendered back as whole-entity updates (SS-13, TM-09):
one whole message per message (ids kept, so a replayed user message keeps the id its
prompt response carried, SS-17), one full ``tool_call_update`` per tool call, one
``compaction_update`` (with its whole summary) per compaction, one
``terminal_update`` snapshot per terminal, the latest plan of each ``planId``, then usage,
commands, config options and session info. Unknown updates are replayed raw (EX-07).
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Iterable
from typing import Any

import msgspec
from msgspec import UNSET

from acp2.schema import (
    AgentMessage,
    AgentThought,
    AvailableCommandsUpdate,
    CompactionUpdate,
    ConfigOptionUpdate,
    Cost,
    PlanUpdate,
    SessionInfoUpdate,
    SessionUpdate,
    TerminalOutput,
    TerminalUpdate,
    ToolCallUpdate,
    UsageUpdate,
    UserMessage,
)
from acp2.schema.codec import decode
from acp2.state import SessionState, reduce
from acp2.state.entities import (
    CompactionState,
    MessageState,
    PlanState,
    TerminalState,
    ToolCallState,
)

__all__ = ["fold", "replay_updates"]

log = logging.getLogger("acp2.agent")

_MESSAGE_TYPES: dict[str, Any] = {
    "user": UserMessage,
    "agent": AgentMessage,
    "thought": AgentThought,
}


def fold(bodies: Iterable[bytes]) -> SessionState:
    """Reduce stored update bodies into a :class:`SessionState`.

    A stored body that no longer decodes (e.g. a malformed known variant an author sent
    through ``Turn.send``) is skipped and logged, so one bad row cannot break resume.
    """
    state = SessionState()
    for body in bodies:
        try:
            update = decode(body, SessionUpdate)
        except (msgspec.ValidationError, msgspec.DecodeError) as exc:
            log.warning("replay skips a stored update that does not decode: %s", exc)
            continue
        reduce(state, update)
    return state


def replay_updates(bodies: Iterable[bytes]) -> list[Any]:
    """Return the updates that rebuild the session stored as ``bodies``, in order."""
    state = fold(bodies)
    out: list[Any] = []
    for entry in state.timeline:
        rendered = _render(entry)
        if rendered is not None:
            out.append(rendered)
    out.extend(_terminal(t) for t in state.terminals.values())
    out.extend(_session_level(state))
    out.extend(state.unknown)
    return out


def _render(entry: Any) -> Any:
    if isinstance(entry, MessageState):
        cls = _MESSAGE_TYPES[entry.kind]
        message = cls(message_id=entry.message_id, content=list(entry.content))
        if entry.meta is not None:
            message.meta = entry.meta
        return message
    if isinstance(entry, ToolCallState):
        return _tool_call(entry)
    if isinstance(entry, PlanState):
        return PlanUpdate(plan=entry.plan) if entry.plan is not None else None
    if isinstance(entry, CompactionState):
        return _compaction(entry)
    return None


def _compaction(comp: CompactionState) -> CompactionUpdate:
    update = CompactionUpdate(
        compaction_id=comp.compaction_id, status=comp.status, summary=list(comp.summary)
    )
    if comp.error is not None:
        update.error = comp.error
    if comp.meta is not None:
        update.meta = comp.meta
    return update


def _tool_call(call: ToolCallState) -> ToolCallUpdate:
    update = ToolCallUpdate(
        tool_call_id=call.tool_call_id,
        kind=call.kind,
        status=call.status,
        content=list(call.content),
        locations=list(call.locations),
    )
    for name in ("title", "raw_input", "raw_output", "name", "capabilities", "meta"):
        value = getattr(call, name)
        if value is not None:
            setattr(update, name, value)
    return update


def _terminal(term: TerminalState) -> TerminalUpdate:
    update = TerminalUpdate(
        terminal_id=term.terminal_id,
        output=TerminalOutput(data=base64.b64encode(bytes(term.output)).decode("ascii")),
    )
    if term.command is not None:
        update.command = term.command
    if term.cwd is not None:
        update.cwd = term.cwd
    if term.exit_status is not None:
        update.exit_status = term.exit_status
    return update


def _session_level(state: SessionState) -> list[Any]:
    out: list[Any] = []
    usage = state.usage
    if usage is not None:
        update = UsageUpdate(used=usage.used, size=usage.size)
        if isinstance(usage.cost, Cost):
            update.cost = usage.cost
        out.append(update)
    if state.available_commands:
        out.append(AvailableCommandsUpdate(available_commands=list(state.available_commands)))
    if state.config_options:
        out.append(ConfigOptionUpdate(config_options=list(state.config_options)))
    info = SessionInfoUpdate()
    if state.title is not None:
        info.title = state.title
    if info.title is not UNSET:
        out.append(info)
    return out

"""Resuming into a state the client already holds: a replay rebuilds, it never doubles.

A client that saw part of a session (say, until its connection dropped) and resumes it
with a replay gets the whole retained history again. Reducing that into the state it
holds would double every message that is replayed as chunks (chunks append), and every
tool call, terminal or compaction summary replayed the same way. :class:`ReplayMerge`
remembers what the state held when the replay began -- entities by key (message
``(kind, messageId)``, ``toolCallId``, ``terminalId``, ``compactionId``, ``planId``) and
unknown updates by their bytes -- and rebuilds each held entity from the replay: the
first replayed update about it clears what the state had, then it and every later one
is reduced as usual. The replay is the agent's full version of the entity. A replay from the start
covers all the history the agent retained, so when it completed, :meth:`ReplayMerge.finish`
drops the held timeline entries it did not name: an agent whose replayed ids differ from
the live ones (SS-17 allows it; a v1 agent behind the bridge gets fresh ids) then still
leaves one copy of each message. Token totals (Preview ``usage`` on idle) are rebuilt the
same way: the first replayed idle ``state_update`` with ``usage`` restarts them, so a
replay that restates its turns' usage does not count it twice, and one that restates
none leaves them as they were. The result is what a fresh state reducing the same
replay holds, with the held entities it named keeping their timeline positions.
Pure: no IO, no event loop.
"""

from __future__ import annotations

from typing import Any, Final

from msgspec import Raw

from acp2.schema.messages import (
    AgentMessage,
    AgentMessageChunk,
    AgentThought,
    AgentThoughtChunk,
    UserMessage,
    UserMessageChunk,
)
from acp2.schema.plan import PlanItems, PlanUpdate
from acp2.schema.session_messages import SessionMessage, SessionMessageChunk
from acp2.schema.states import StateUpdate, Usage
from acp2.schema.terminal import TerminalOutputChunk, TerminalUpdate
from acp2.schema.tools import ToolCallContentChunk, ToolCallUpdate
from acp2.schema.updates import CompactionSummaryChunk, CompactionUpdate
from acp2.state.entities import MessageState, PlanState, ToolCallState
from acp2.state.reducer import reduce
from acp2.state.session import Entry, SessionState

__all__ = ["ReplayMerge", "entity_key"]

#: An entity's key: its kind (a message kind, ``tool_call``, ``terminal``, ...) and id.
Key = tuple[str, str]

_MESSAGE_KINDS: Final[dict[type, str]] = {
    UserMessage: "user",
    UserMessageChunk: "user",
    AgentMessage: "agent",
    AgentMessageChunk: "agent",
    AgentThought: "thought",
    AgentThoughtChunk: "thought",
    SessionMessage: "session",
    SessionMessageChunk: "session",
}
_TOOL_KINDS: Final = (ToolCallUpdate, ToolCallContentChunk)
_TERMINAL_KINDS: Final = (TerminalUpdate, TerminalOutputChunk)
_COMPACTION_KINDS: Final = (CompactionUpdate, CompactionSummaryChunk)


def entity_key(update: Any) -> Key | None:
    """The key of the entity ``update`` is about; None for a session-level snapshot
    (state, usage, commands, config, info), a notice, a marker or an unknown kind."""
    kind = type(update)
    message_kind = _MESSAGE_KINDS.get(kind)
    if message_kind is not None:
        return (message_kind, update.message_id)
    if kind in _TOOL_KINDS:
        return ("tool_call", update.tool_call_id)
    if kind in _TERMINAL_KINDS:
        return ("terminal", update.terminal_id)
    if kind in _COMPACTION_KINDS:
        return ("compaction", update.compaction_id)
    if kind is PlanUpdate and isinstance(update.plan, PlanItems):
        return ("plan", update.plan.plan_id)
    return None


def _held_keys(state: SessionState) -> set[Key]:
    keys: set[Key] = set(state.messages)
    keys.update(("tool_call", tid) for tid in state.tool_calls)
    keys.update(("terminal", tid) for tid in state.terminals)
    keys.update(("compaction", cid) for cid in state.compactions)
    keys.update(("plan", pid) for pid in state.plans)
    return keys


def _key_of(entry: Entry) -> Key:
    if isinstance(entry, MessageState):
        return (entry.kind, entry.message_id)
    if isinstance(entry, ToolCallState):
        return ("tool_call", entry.tool_call_id)
    if isinstance(entry, PlanState):
        return ("plan", entry.plan_id)
    return ("compaction", entry.compaction_id)


def _clear(state: SessionState, key: Key) -> None:
    """Clear what the state accumulated for ``key`` (what a chunk would append to); the
    patched fields need no clearing: the replay's whole update sets them again."""
    kind, ident = key
    if kind == "tool_call":
        state.tool_calls[ident].content = []
    elif kind == "terminal":
        state.terminals[ident].replace_output(b"")
    elif kind == "compaction":
        state.compactions[ident].summary = []
    elif kind != "plan":  # a plan update is a snapshot already
        message = state.messages[key]
        message.replace_content([])
        message.meta = None


class ReplayMerge:
    """Reduces one replay into a state that already held part of the session.

    Make one when the replay begins (it notes what ``state`` holds then), give every
    replayed update to :meth:`absorb` (reduce the others as usual), and call
    :meth:`finish` once the replay completed (not after a truncated one).
    """

    __slots__ = ("_held", "_rebuilt", "_unknown", "_usage_rebuilt")

    def __init__(self, state: SessionState) -> None:
        self._held = _held_keys(state)
        self._unknown = {bytes(raw) for raw in state.unknown}
        self._rebuilt: set[Key] = set()
        self._usage_rebuilt = False

    def absorb(self, state: SessionState, update: Any) -> bool:
        """If ``update`` is about something ``state`` held when the replay began, take it
        in (the first one about an entity clears it, then it is reduced; an unknown
        update the state already keeps is dropped) and return True: callers then do not
        hand it on as news. Return False, changing nothing, for anything else."""
        if type(update) is Raw:
            return bytes(update) in self._unknown
        if type(update) is StateUpdate:
            self._rebuild_usage(state, update)
            return False
        key = entity_key(update)
        if key is None or key not in self._held:
            return False
        if key not in self._rebuilt:
            self._rebuilt.add(key)
            _clear(state, key)
        reduce(state, update)
        return True

    def _rebuild_usage(self, state: SessionState, update: StateUpdate) -> None:
        # Replayed turns restate their token usage: the first replayed report restarts
        # the totals, as the first replayed update about an entity clears it.
        if not self._usage_rebuilt and type(update.usage) is Usage:
            self._usage_rebuilt = True
            state.token_totals = None

    def finish(self, state: SessionState) -> None:
        """The replay completed: drop the held messages, tool calls, plans and compactions
        it did not name (terminals and unknown updates are kept)."""
        gone = {key for key in self._held if key[0] != "terminal"} - self._rebuilt
        if not gone:
            return
        for key in gone:
            kind, ident = key
            if kind == "tool_call":
                state.tool_calls.pop(ident, None)
            elif kind == "plan":
                state.plans.pop(ident, None)
            elif kind == "compaction":
                state.compactions.pop(ident, None)
            else:
                state.messages.pop(key, None)
        state.timeline = [entry for entry in state.timeline if _key_of(entry) not in gone]

"""The pure reducer: apply one ``session/update`` to a :class:`SessionState`, in place.

Patch rules (section 3 of the checklist): on upserts, an omitted field keeps its value,
``null`` clears it, a value replaces it; arrays are replaced whole and ``[]`` / ``null``
clear them; chunks append in place; chunk ``_meta`` is chunk-scoped; upsert ``_meta`` is
key-patched (Nov, accepted from Aug peers too). Unknown update kinds are kept raw.
The reducer never raises on what a peer may legally send, including values it does not
know; only a Python value that is not an update at all is a ``TypeError``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from msgspec import UNSET, Raw

from acp2.schema.codec import decode_any, encode
from acp2.schema.commands import AvailableCommandsUpdate
from acp2.schema.config import ConfigOptionUpdate
from acp2.schema.content import TextContent
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
from acp2.schema.updates import (
    CompactionSummaryChunk,
    CompactionUpdate,
    Notice,
    ReplayComplete,
    SessionInfoUpdate,
    SubagentUpdate,
    UpdateSessionNotification,
    UsageUpdate,
)
from acp2.state._patch import patch_meta
from acp2.state.entities import FOLD_CHUNKS, ChildSession, MessageState, TokenTotals, UsageState
from acp2.state.session import SessionState
from acp2.state.tools import (
    append_terminal_output,
    append_tool_call_content,
    apply_terminal,
    apply_tool_call,
)

__all__ = ["reduce", "reduce_agent_text"]

_Handler = Callable[[SessionState, Any], None]


def reduce(state: SessionState, update: Any) -> SessionState:
    """Apply ``update`` to ``state`` in place and return ``state``.

    ``update`` is one ``SessionUpdate`` variant (``msgspec.Raw`` for an unknown kind) or a
    whole :class:`UpdateSessionNotification`. Raises ``TypeError`` for anything else.
    The notification's ``sessionId`` is recorded when ``state`` has none; routing updates
    to the right session is the caller's job.
    """
    handler = _HANDLERS.get(type(update))
    if handler is None:
        raise TypeError(f"not a session update: {type(update).__name__}")
    handler(state, update)
    return state


def reduce_agent_text(state: SessionState, update: AgentMessageChunk) -> bool:
    """:func:`reduce` an ``agent_message_chunk`` whose content is plain text (no
    annotations, no ``_meta``) and return True; return False, changing nothing, for any
    other content (reduce those with :func:`reduce`).

    The hot path of a streaming client: one check of the block serves the state here and
    the caller's own bookkeeping, which may then rely on the text being plain.
    """
    block = update.content
    if type(block) is not TextContent or block.annotations is not UNSET or block.meta is not UNSET:
        return False
    msg = state.messages.get(("agent", update.message_id))
    if msg is None:
        msg = state.message("agent", update.message_id)
    pending = msg._pending
    pending.append(block.text)
    if len(pending) >= FOLD_CHUNKS:
        msg._fold()
    return True


# -- messages (MU-*) ---------------------------------------------------------------------


def _chunk_handler(kind: str) -> _Handler:
    def append_chunk(state: SessionState, update: Any) -> None:
        msg = state.messages.get((kind, update.message_id))
        if msg is None:
            msg = state.message(kind, update.message_id)
        block = update.content
        # The hot path of a stream, inlined: a plain text chunk costs its string only.
        if type(block) is TextContent and block.annotations is UNSET and block.meta is UNSET:
            pending = msg._pending
            pending.append(block.text)
            if len(pending) >= FOLD_CHUNKS:
                msg._fold()
        else:
            msg.append(block)

    return append_chunk


def _message_handler(kind: str) -> _Handler:
    def upsert_message(state: SessionState, update: Any) -> None:
        content = update.content
        key = (kind, update.message_id)
        msg = state.messages.get(key)
        if msg is None and content:
            # A new message with content (every prompt's user message): made with its
            # blocks, as SessionState.message would make it, instead of empty and replaced.
            msg = MessageState(kind, update.message_id, _blocks=list(content))
            state.messages[key] = msg
            state.timeline.append(msg)
        else:
            msg = state.message(kind, update.message_id)
            if content is not UNSET:
                msg.replace_content(content)
        if update.meta is not UNSET:  # omitted keeps the current _meta (MU-07)
            msg.meta = patch_meta(msg.meta, update.meta)

    return upsert_message


# -- foreground state (PL-*) ------------------------------------------------------------


def _state_update(state: SessionState, update: StateUpdate) -> None:
    was_busy = state.foreground != "idle"  # SessionState.busy without the property call
    state.foreground = update.state
    background = update.background
    state.background = list(background) if isinstance(background, list) else None
    if update.state == "idle":
        if was_busy:
            state.completed += 1
            state.stop_reason = state.error = None
        # A repeated idle is a snapshot (PL-24): it may restate, never erase, the reason.
        if isinstance(update.stop_reason, str):
            state.stop_reason = update.stop_reason
        if update.error is not UNSET and update.error is not None:
            state.error = update.error
        if type(update.usage) is Usage:
            _add_usage(state, update.usage)
    elif not was_busy:
        state.work += 1


def _add_usage(state: SessionState, usage: Usage) -> None:
    # Every report counts, a repeated idle's too: each one is the usage of work that ended.
    state.turn_usage = usage
    totals = state.token_totals
    if totals is None:
        totals = state.token_totals = TokenTotals()
    totals.add(usage)


# -- plans, commands, config, info, usage (PN-, CM-, CO-, SI-, US-) ---------------------


def _plan_update(state: SessionState, update: PlanUpdate) -> None:
    plan = update.plan
    plan_id = plan.plan_id if isinstance(plan, PlanItems) else _raw_plan_id(plan)
    if plan_id is None:
        state.unknown.append(Raw(encode(update)))
    else:
        state.set_plan(plan_id, plan)


def _raw_plan_id(plan: Raw) -> str | None:
    obj = decode_any(plan)
    plan_id = obj.get("planId") if isinstance(obj, dict) else None
    return plan_id if isinstance(plan_id, str) else None


def _commands_update(state: SessionState, update: AvailableCommandsUpdate) -> None:
    state.available_commands = list(update.available_commands)


def _config_update(state: SessionState, update: ConfigOptionUpdate) -> None:
    state.config_options = list(update.config_options)


def _info_update(state: SessionState, update: SessionInfoUpdate) -> None:
    if update.title is not UNSET:
        state.title = update.title
    if update.updated_at is not UNSET:
        state.updated_at = update.updated_at
    state.meta = patch_meta(state.meta, update.meta)


def _usage_update(state: SessionState, update: UsageUpdate) -> None:
    usage = state.usage
    if usage is None:
        usage = state.usage = UsageState(update.used, update.size)
    usage.used = update.used
    usage.size = update.size
    if update.cost is not UNSET:
        usage.cost = update.cost


# -- notices, compactions, replay boundary, unknown (Nov, Preview, EX-07) ------------


def _notice(state: SessionState, update: Notice) -> None:
    state.notices.append(update)


def _compaction_update(state: SessionState, update: CompactionUpdate) -> None:
    comp = state.compaction(update.compaction_id)
    comp.status = update.status
    if update.summary is not UNSET:
        comp.summary = list(update.summary) if update.summary else []
    if update.error is not UNSET:
        comp.error = update.error
    comp.meta = patch_meta(comp.meta, update.meta)


def _compaction_chunk(state: SessionState, update: CompactionSummaryChunk) -> None:
    state.compaction(update.compaction_id).summary.append(update.content)


def _replay_complete(state: SessionState, update: ReplayComplete) -> None:
    # A boundary, not history: the state only counts the replays that finished.
    state.replays += 1


def _subagent_update(state: SessionState, update: SubagentUpdate) -> None:
    child = state.subagents.get(update.session_id)
    if child is None:
        child = state.subagents[update.session_id] = ChildSession(update.session_id)
    for name in _SUBAGENT_FIELDS:
        value = getattr(update, name)
        if value is not UNSET:
            setattr(child, name, value)
    child.meta = patch_meta(child.meta, update.meta)


#: The patched fields of ``subagent_update`` (omitted keeps, ``None`` clears).
_SUBAGENT_FIELDS: Final = (
    "title",
    "description",
    "capabilities",
    "state",
    "cwd",
    "additional_directories",
)


def _session_message(state: SessionState, update: SessionMessage) -> None:
    msg = state.session_message(update.message_id)
    for name in _SESSION_MESSAGE_IDS:
        value = getattr(update, name)
        if value is not UNSET:
            setattr(msg, name, value)
    if update.content is not UNSET:
        msg.replace_content(update.content)
    msg.meta = patch_meta(msg.meta, update.meta)


def _session_message_chunk(state: SessionState, update: SessionMessageChunk) -> None:
    msg = state.session_message(update.message_id)
    for name in _SESSION_MESSAGE_IDS:
        value = getattr(update, name)
        if isinstance(value, str):  # a chunk sets an id, never clears one
            setattr(msg, name, value)
    msg.append(update.content)


#: The patched ids of a message between sessions.
_SESSION_MESSAGE_IDS: Final = (
    "sender_session_id",
    "recipient_session_id",
    "sender_message_id",
    "recipient_message_id",
)


def _unknown(state: SessionState, update: Raw) -> None:
    state.unknown.append(update)


def _notification(state: SessionState, note: UpdateSessionNotification) -> None:
    if state.session_id is None:
        state.session_id = note.session_id
    reduce(state, note.update)


_HANDLERS: Final[dict[type, _Handler]] = {
    UserMessageChunk: _chunk_handler("user"),
    AgentMessageChunk: _chunk_handler("agent"),
    AgentThoughtChunk: _chunk_handler("thought"),
    UserMessage: _message_handler("user"),
    AgentMessage: _message_handler("agent"),
    AgentThought: _message_handler("thought"),
    StateUpdate: _state_update,
    ToolCallUpdate: apply_tool_call,
    ToolCallContentChunk: append_tool_call_content,
    TerminalUpdate: apply_terminal,
    TerminalOutputChunk: append_terminal_output,
    PlanUpdate: _plan_update,
    AvailableCommandsUpdate: _commands_update,
    ConfigOptionUpdate: _config_update,
    SessionInfoUpdate: _info_update,
    UsageUpdate: _usage_update,
    Notice: _notice,
    CompactionUpdate: _compaction_update,
    CompactionSummaryChunk: _compaction_chunk,
    ReplayComplete: _replay_complete,
    SubagentUpdate: _subagent_update,
    SessionMessage: _session_message,
    SessionMessageChunk: _session_message_chunk,
    Raw: _unknown,
    UpdateSessionNotification: _notification,
}

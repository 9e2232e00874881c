"""Replay: fold a session's stored updates into the few updates that rebuild it.

Stored history is every update the agent sent, chunks included. Replaying 100 000 chunks
one by one would be slow and noisy, so the history is reduced with the same pure reducer
clients use (:mod:`acp2.state`) and rendered back as whole-entity updates (SS-13, TM-09):
one whole message per message (ids kept, so a replayed user message keeps the id its
prompt response carried, SS-17; a message between sessions keeps its sender and
recipient ids), one full ``tool_call_update`` per tool call, one
``compaction_update`` (with its whole summary) per compaction, one
``terminal_update`` snapshot per terminal, the latest plan of each ``planId``, then usage,
commands, config options and session info. Unknown updates are replayed raw (EX-07).

Long sessions: :func:`fold_rows` folds the stored rows batch by batch and lets other
tasks run every :data:`FOLD_SLICE` seconds, so resuming a session of a million chunks does
not freeze the agent; :func:`render` splits an entity too big for one frame into a whole
update and appended chunks with the same id (:mod:`acp2.agent.split`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Container, Iterable, Iterator
from typing import Any

import anyio
import anyio.lowlevel
import anyio.to_thread
import msgspec
from msgspec import UNSET

from acp2.agent.children import replayed
from acp2.agent.split import fits, pieces, split_bytes
from acp2.schema import (
    AgentMessage,
    AgentMessageChunk,
    AgentThought,
    AgentThoughtChunk,
    AvailableCommandsUpdate,
    CompactionSummaryChunk,
    CompactionUpdate,
    ConfigOptionUpdate,
    Cost,
    PlanUpdate,
    SessionInfoUpdate,
    SessionMessage,
    SessionMessageChunk,
    SessionUpdate,
    TerminalOutput,
    TerminalOutputChunk,
    TerminalUpdate,
    ToolCallContentChunk,
    ToolCallUpdate,
    UsageUpdate,
    UserMessage,
    UserMessageChunk,
)
from acp2.schema.codec import decode
from acp2.state import SessionState, reduce
from acp2.state.entities import (
    CompactionState,
    MessageState,
    PlanState,
    SessionMessageState,
    TerminalState,
    ToolCallState,
)

__all__ = ["FOLD_SLICE", "fold", "fold_rows", "render", "replay_updates"]

log = logging.getLogger("acp2.agent")

_MESSAGE_TYPES: dict[str, Any] = {
    "user": UserMessage,
    "agent": AgentMessage,
    "thought": AgentThought,
    "session": SessionMessage,
}
_CHUNK_TYPES: dict[str, Any] = {
    "user": UserMessageChunk,
    "agent": AgentMessageChunk,
    "thought": AgentThoughtChunk,
    "session": SessionMessageChunk,
}
#: The ids a message between sessions carries besides its own (Preview).
_SESSION_MESSAGE_IDS = (
    "sender_session_id",
    "recipient_session_id",
    "sender_message_id",
    "recipient_message_id",
)

#: Longest :func:`fold_rows` keeps the event loop before letting other tasks run (s).
FOLD_SLICE = 0.01
#: Bodies folded between two looks at the clock.
_CHECK_EVERY = 256
#: A stored row at least this long is cut body by body rather than split at once.
_BIG_ROW = 1024 * 1024


def _apply(state: SessionState, body: bytes) -> None:
    try:
        update = decode(body, SessionUpdate)
    except (msgspec.ValidationError, msgspec.DecodeError) as exc:
        log.warning("replay skips a stored update that does not decode: %s", exc)
        return
    reduce(state, update)


def fold(bodies: Iterable[bytes]) -> SessionState:
    """Reduce stored update bodies into a :class:`SessionState`.

    A stored body that no longer decodes (e.g. a malformed known variant an author sent
    through ``Turn.send``) is skipped and logged, so one bad row cannot break resume.
    """
    state = SessionState()
    for body in bodies:
        _apply(state, body)
    return state


def _bodies(row: bytes) -> Iterator[bytes]:
    """The newline-joined bodies of one stored row (a big row is not split all at once)."""
    if len(row) < _BIG_ROW:
        yield from row.split(b"\n")
        return
    start = 0
    while (end := row.find(b"\n", start)) >= 0:
        yield row[start:end]
        start = end + 1
    yield row[start:]


async def fold_rows(batches: Iterator[list[bytes]], *, threaded: bool = False) -> SessionState:
    """:func:`fold` over stored rows (``HistoryStore.row_batches``), letting other tasks
    run at least every :data:`FOLD_SLICE` seconds; with ``threaded`` each batch is
    fetched in a worker thread."""
    state = SessionState()
    deadline = time.perf_counter() + FOLD_SLICE
    count = 0
    while True:
        if threaded:
            rows = await anyio.to_thread.run_sync(next, batches, None)
        else:
            rows = next(batches, None)
        if rows is None:
            return state
        for row in rows:
            for body in _bodies(row):
                _apply(state, body)
                count += 1
                if count % _CHECK_EVERY == 0 and time.perf_counter() > deadline:
                    await anyio.lowlevel.checkpoint()
                    deadline = time.perf_counter() + FOLD_SLICE


def render(state: SessionState, live: Container[str] = ()) -> Iterator[Any]:
    """Yield the updates that rebuild ``state``, in order, none bigger than a frame
    budget unless a single block is (see :mod:`acp2.agent.split`).

    The session's children come first, each re-announced (:func:`replayed`): before
    anything bearing a child's id, such as a tool call's ``session`` content. Only the
    children whose ids are in ``live`` keep their ``cancel`` capability."""
    for child in state.subagents.values():
        yield replayed(child, child.session_id in live)
    for entry in state.timeline:
        yield from _render(entry)
    for term in state.terminals.values():
        yield from _terminal(term)
    yield from _session_level(state)
    yield from state.unknown


def replay_updates(bodies: Iterable[bytes]) -> list[Any]:
    """Return the updates that rebuild the session stored as ``bodies``, in order."""
    return list(render(fold(bodies)))


def _render(entry: Any) -> Iterator[Any]:
    if isinstance(entry, MessageState):
        yield from _message(entry)
    elif isinstance(entry, ToolCallState):
        yield from _tool_call(entry)
    elif isinstance(entry, PlanState):
        if entry.plan is not None:
            yield PlanUpdate(plan=entry.plan)
    elif isinstance(entry, CompactionState):
        yield from _compaction(entry)


def _head_and_rest(content: list[Any]) -> tuple[list[Any], Iterator[Any]]:
    """All of ``content`` when it fits in a frame; else its first piece and the rest
    (produced lazily, so the replay loop can yield between pieces)."""
    if fits(content):
        return list(content), iter(())
    parts = pieces(content)
    return [next(parts)], parts


def _message(entry: MessageState) -> Iterator[Any]:
    head, rest = _head_and_rest(entry.content)
    message = _MESSAGE_TYPES[entry.kind](message_id=entry.message_id, content=head)
    if entry.meta is not None:
        message.meta = entry.meta
    if isinstance(entry, SessionMessageState):
        for name in _SESSION_MESSAGE_IDS:
            if (value := getattr(entry, name)) is not None:
                setattr(message, name, value)
    yield message
    chunk = _CHUNK_TYPES[entry.kind]
    for block in rest:
        yield chunk(message_id=entry.message_id, content=block)


def _compaction(comp: CompactionState) -> Iterator[Any]:
    head, rest = _head_and_rest(comp.summary)
    update = CompactionUpdate(compaction_id=comp.compaction_id, status=comp.status, summary=head)
    if comp.error is not None:
        update.error = comp.error
    if comp.meta is not None:
        update.meta = comp.meta
    yield update
    for block in rest:
        yield CompactionSummaryChunk(compaction_id=comp.compaction_id, content=block)


def _tool_call(call: ToolCallState) -> Iterator[Any]:
    content = list(call.content)
    head, rest = (content, []) if fits(content) else (content[:1], content[1:])
    update = ToolCallUpdate(
        tool_call_id=call.tool_call_id,
        kind=call.kind,
        status=call.status,
        content=head,
        locations=list(call.locations),
    )
    for name in ("title", "raw_input", "raw_output", "name", "capabilities", "meta"):
        value = getattr(call, name)
        if value is not None:
            setattr(update, name, value)
    yield update
    for item in rest:
        yield ToolCallContentChunk(tool_call_id=call.tool_call_id, content=item)


def _terminal(term: TerminalState) -> Iterator[Any]:
    first, *rest = split_bytes(bytes(term.output))
    update = TerminalUpdate(terminal_id=term.terminal_id, output=TerminalOutput(data=first))
    if term.command is not None:
        update.command = term.command
    if term.cwd is not None:
        update.cwd = term.cwd
    if term.exit_status is not None and not rest:
        update.exit_status = term.exit_status
    yield update
    for data in rest:
        yield TerminalOutputChunk(terminal_id=term.terminal_id, data=data)
    if term.exit_status is not None and rest:
        yield TerminalUpdate(terminal_id=term.terminal_id, exit_status=term.exit_status)


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

"""Taking over a durable stream whose node died, from its stored cursor: a WebSocket
(:func:`restore`), or every SSE stream of a Streamable HTTP connection
(:func:`restore_streams`).

A resume naming a stream this node does not hold looks the stream up in the cursor store
(:mod:`acp2.store.cursors`). :func:`plan` (from :mod:`acp2.serve.takeover_plan`) decides,
without any I/O, whether what the client missed can be rebuilt exactly and how, or
refuses with the close code the client falls back on.

:func:`restore` then makes the connection here under the same id: the agent side gets
the client's stored ``initialize`` and a ``session/resume`` (no replay) per session,
answered to the server, not the client, and retried while the dead node's lease has not
lapsed (``-32010``); its output is held meanwhile. Once every session is held here
(nobody else writes their history any more), the missed messages are rebuilt from the
history, queued under the seqs after the client's, and the held output (the resumes'
state snapshots and commands) follows them. A Streamable HTTP connection's reopens each
name their own stream's ``Last-Event-ID``, one request at a time: its streams are
rebuilt from their stored bases instead (every position a client can be at), and each
reopen then resends what it missed as on the node that died.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

import anyio
import anyio.to_thread

from acp2.errors import InternalError
from acp2.rpc.envelope import read
from acp2.rpc.messages import ErrorResponse, RequestId, encode_request
from acp2.schema.methods import SESSION_RESUME
from acp2.serve.cursor import CursorRecorder, history_session
from acp2.serve.takeover_plan import (
    Plan,
    StreamsPlan,
    Unrestorable,
    history_after,
    plan,
    plan_streams,
    rebuild,
    rebuild_streams,
)
from acp2.store.cursors import CursorStore, StreamCursor, Track, open_cursors
from acp2.store.leasing import LEASE_TTL

if TYPE_CHECKING:
    from acp2.serve.registry import Registry
    from acp2.serve.remote_connection import RemoteConnection
    from acp2.store.base import SessionStore

__all__ = [
    "Backing",
    "Plan",
    "StreamsPlan",
    "Unrestorable",
    "load",
    "plan",
    "plan_streams",
    "restore",
    "restore_streams",
]

#: Seconds between two resumes of a session whose dead owner's lease has not lapsed.
LEASE_POLL: Final = 0.2
_SESSION_IN_USE: Final = -32010
_ids = itertools.count(1)


class Backing:
    """What a node needs to take streams over: the history store (the agent's, opened on
    first use by ``store``), the cursor store beside it (``cursors``, else
    :func:`~acp2.store.cursors.open_cursors` on first use), and how long a dead owner's
    session lease may still hold (the store's lease ttl)."""

    def __init__(
        self, store: Callable[[], SessionStore], cursors: CursorStore | None = None
    ) -> None:
        self._store = store
        self._cursors = cursors

    @property
    def store(self) -> SessionStore:
        """The history store."""
        return self._store()

    @property
    def cursors(self) -> CursorStore:
        """The cursor store."""
        if self._cursors is None:
            self._cursors = open_cursors(self.store)
        return self._cursors

    @property
    def lease_ttl(self) -> float:
        """Seconds a session lease lasts without its owner's heartbeat."""
        leases = getattr(self.store, "leases", None)
        return float(getattr(leases, "ttl", LEASE_TTL))


async def restore(registry: Registry, backing: Backing, result: Plan) -> RemoteConnection:
    """Make the stream of ``result.cursor`` live here, its missed messages queued; raises
    :class:`Unrestorable` (the connection is ended) when that fails."""
    cursor = result.cursor
    assert registry.config.durable
    connection = registry.create(
        cursor.principal, "websocket", registry.config.retention, connection_id=cursor.id
    )
    try:
        connection.received.last = cursor.received
        connection.main.start_at(result.last)
        tails = await _sessions_back(connection, backing, cursor, result.positions)
        connection.recorder = CursorRecorder.resumed(backing.cursors, _going_on(result))
        for line in rebuild(result, tails):
            connection.push_restored(line)
        connection.release_output()
    except BaseException:
        registry.remove(connection.id)
        raise
    return connection


async def restore_streams(
    registry: Registry, backing: Backing, result: StreamsPlan
) -> RemoteConnection:
    """Make the Streamable HTTP connection of ``result.cursor`` live here, every SSE
    stream's window rebuilt from its base (a reopen's ``Last-Event-ID`` then resends
    what it missed); raises :class:`Unrestorable` (the connection is ended) when that
    fails."""
    cursor = result.cursor
    assert registry.config.durable
    connection = registry.create(
        cursor.principal, "http", registry.config.retention, connection_id=cursor.id
    )
    try:
        connection.received.last = cursor.received
        for stream, base in result.bases.items():
            connection.stream(stream).start_at(base)
        tails = await _sessions_back(connection, backing, cursor, result.positions)
        connection.recorder = CursorRecorder.resumed(backing.cursors, _streams_going_on(result))
        for stream, lines in rebuild_streams(result, tails).items():
            for line in lines:
                connection.push_restored_to(stream, line)
        connection.release_output()
    except BaseException:
        registry.remove(connection.id)
        raise
    return connection


async def _sessions_back(
    connection: RemoteConnection, backing: Backing, cursor: StreamCursor, positions: dict[str, int]
) -> dict[str, list[bytes]]:
    """Hold the output, send the stored ``initialize``, resume every session (retried
    until its old lease can have expired) and return the sessions' history tails less
    what those resumes recorded."""
    connection.hold_output()
    await _initialize(connection, cursor)
    deadline = time.monotonic() + backing.lease_ttl + 5.0
    for session in positions:
        await _resume(connection, backing.store, session, deadline)
    return _without_own(await _tails(backing.store, positions), connection)


def _streams_going_on(result: StreamsPlan) -> StreamCursor:
    """The cursor of the connection here before anything is queued: every stream at its
    base, the sessions at ``result.positions``."""
    cursor = result.cursor
    streams = {s: Track(base=t.base, sent=t.base) for s, t in cursor.streams.items()}
    return _here(cursor, result.positions, cursor.base, kind=cursor.kind, streams=streams)


def _here(cursor: StreamCursor, positions: dict[str, int], at: int, **more: Any) -> StreamCursor:
    """A new cursor of ``cursor``'s stream going on from seq ``at`` with the sessions at
    ``positions`` (what the taking node records from)."""
    return StreamCursor(
        id=cursor.id,
        principal=cursor.principal,
        initialize=cursor.initialize,
        received=cursor.received,
        base=at,
        sent=at,
        counts=dict(positions),
        **more,
    )


def _without_own(
    tails: dict[str, list[bytes]], connection: RemoteConnection
) -> dict[str, list[bytes]]:
    """``tails`` less the updates this node's resumes recorded: they are the last of each
    session's history (nothing else writes it now) and go out with the held output."""
    own: dict[str, int] = {}
    for line in connection.held_output():
        session = history_session(line)
        if session is not None:
            own[session] = own.get(session, 0) + 1
    return {s: bodies[: max(0, len(bodies) - own.get(s, 0))] for s, bodies in tails.items()}


def _going_on(result: Plan) -> StreamCursor:
    """The cursor of the stream here before anything is queued: the client is at
    ``result.last`` with ``result.positions``."""
    return _here(result.cursor, result.positions, result.last)


async def _initialize(connection: RemoteConnection, cursor: StreamCursor) -> None:
    line = bytes(cursor.initialize)
    key = read(line).answer_id
    if key is None:
        raise Unrestorable(4404, "the stored initialize has no id")
    answer = await _answer(connection, key, line, connection.config.initialize_timeout)
    if _error_code(answer) is not None:
        raise Unrestorable(4404, "the agent refused the stream's initialize")


async def _resume(
    connection: RemoteConnection, store: SessionStore, session: str, deadline: float
) -> None:
    """Resume ``session`` on the agent side, asking again while its lease is held."""
    record = store.get_session(session)
    if record is None:
        raise Unrestorable(4404, f"the session {session} is gone")
    leases = getattr(store, "leases", None)
    if leases is not None and session in leases.held():
        # Live here for another client already (it resumed after the death): its live
        # updates would race the rebuild's read of the history.
        raise Unrestorable(4404, f"the session {session} is live here on another connection")
    params = {
        "sessionId": session,
        "cwd": record.cwd,
        "additionalDirectories": record.additional_directories,
    }
    while True:
        request_id = f"acp2-takeover-{next(_ids)}"
        line = encode_request(request_id, SESSION_RESUME.name, params)
        wait = max(0.0, deadline - time.monotonic())
        answer = await _answer(connection, request_id, line, wait)
        code = _error_code(answer)
        if code is None:
            return
        if code != _SESSION_IN_USE or time.monotonic() + LEASE_POLL > deadline:
            raise Unrestorable(4404, f"the agent refused to resume {session} ({code})")
        await anyio.sleep(LEASE_POLL)


async def _answer(
    connection: RemoteConnection, key: RequestId, line: bytes, within: float
) -> bytes:
    future = await connection.ask(key, line)
    try:
        with anyio.fail_after(within):
            return await asyncio.shield(future)
    except TimeoutError:
        raise Unrestorable(4404, "the agent did not answer in time") from None


def _error_code(answer: bytes) -> int | None:
    """The error code of ``answer`` (None for a result; -32603 for what is neither)."""
    envelope = read(answer)
    if envelope.kind == "response":
        return None
    message = envelope.message
    return message.code if isinstance(message, ErrorResponse) else InternalError.code


async def _tails(store: SessionStore, positions: dict[str, int]) -> dict[str, list[bytes]]:
    """Every session's history after what the client has (in a worker thread when the
    store reads through a connection of its own)."""
    tails: dict[str, list[bytes]] = {}
    for session, skip in positions.items():
        batches = store.row_batches(session)  # here: it flushes the store first
        if store.on_disk:
            tails[session] = await anyio.to_thread.run_sync(history_after, batches, session, skip)
        else:
            tails[session] = history_after(batches, session, skip)
    return tails


def load(backing: Backing, stream_id: str, max_age: float) -> StreamCursor | None:
    """The stored cursor of ``stream_id`` (None when absent, too old, or unreadable)."""
    try:
        return backing.cursors.load(stream_id, max_age)
    except Exception:
        return None

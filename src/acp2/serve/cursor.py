"""The recorder of one durable connection's cursor (:mod:`acp2.store.cursors`).

:class:`CursorRecorder` watches what the stream carries -- every message queued for the
client (:meth:`~CursorRecorder.sent`, in seq order) and every message taken from it
(:meth:`~CursorRecorder.took`) -- and keeps the :class:`~acp2.store.cursors.StreamCursor`
another node would need. The socket's writer calls :meth:`~CursorRecorder.cover` before
it writes a batch: the cursor is stored when the batch holds a seq the stored cursor does
not describe (a new mark; a run of one session's history updates that goes on needs no
write), so whatever the client can have received, the database describes. The server
acknowledges client messages only up to the ``received`` stored (:meth:`cover_received`),
so the client still holds whatever a node taking over did not see.

A history update is a ``session/update`` whose kind the agent runtime records
(:data:`acp2.store.base.NOT_RECORDED` lists the others): the n-th such message of a
session that the stream carried from its start is the session's n-th history update, as
the runtime records each update before it is sent, in order. A session the stream
resumed or attached to midway has no such count (``lost``): while it is carried, a
resume elsewhere is refused.

A durable WebSocket is one stream. A durable Streamable HTTP connection has one per SSE
stream, each with its own seqs (:meth:`~CursorRecorder.sent_on`,
:meth:`~CursorRecorder.ack_on`): the connection's, and a
:class:`~acp2.store.cursors.Track` per session stream. Every writer covers the one row
that describes them all; what is shared (the open requests, ``lost``, ``closed``, the
counts) is kept once. A session's history updates must all go to its own stream (its
count belongs to that stream's position); one that goes elsewhere ends the recording.
"""

from __future__ import annotations

import logging
import time
from itertools import islice, takewhile
from operator import methodcaller
from typing import Final

import msgspec

from acp2.compat.v1.methods import METHODS as V1_METHODS
from acp2.errors import InvalidRequest
from acp2.rpc.envelope import read, result_session
from acp2.rpc.guarded import decode
from acp2.rpc.messages import Request, RequestId
from acp2.rpc.update_frames import run_head, update_of
from acp2.schema.extensions import EXTENSIONS
from acp2.schema.methods import (
    INITIALIZE,
    METHODS,
    SESSION_CLOSE,
    SESSION_NEW,
)
from acp2.store.base import NOT_RECORDED
from acp2.store.cursors import NOT_KEPT, CursorStore, Other, Run, StreamCursor, Track

__all__ = [
    "MAX_KEPT",
    "MAX_KEPT_BYTES",
    "MAX_MARKS",
    "REFOLD_EVERY",
    "CursorRecorder",
    "history_session",
]

log = logging.getLogger("acp2.serve")

#: The largest message kept in a cursor as bytes; a bigger one makes a rebuild that
#: needs it impossible (a resume then falls back to session/resume with replay).
MAX_KEPT: Final = 64 * 1024
#: The most message bytes one cursor keeps; later messages are marked not kept.
MAX_KEPT_BYTES: Final = 1024 * 1024
#: Seconds between two attempts to delete a row a failed write or delete left behind.
RETRY_DELETE: Final = 5.0
#: The most marks one cursor holds (a client that stops acknowledging); past it the
#: stream is no longer recorded: a resume elsewhere is refused.
MAX_MARKS: Final = 4096
#: Acknowledged seqs of one SSE stream past its stored ``base`` that make the cursor
#: stored again (:meth:`CursorRecorder.ack_on`): what a takeover rebuilds stays bounded.
REFOLD_EVERY: Final = 4096

#: What follows the kind field of an update that is never recorded (one startswith).
_UNRECORDED: Final = tuple(kind + b'"' for kind in NOT_RECORDED)
#: Requests after which the count of a session's history on this stream is unknown: those
#: the method tables (v2, acp2's extensions, v1) mark as joining a session.
_JOINS: Final = frozenset(
    spec.name
    for table in (METHODS, EXTENSIONS, V1_METHODS)
    for spec in table.values()
    if spec.joins_session
)


class _Version(msgspec.Struct):
    protocol_version: int = msgspec.field(default=0, name="protocolVersion")


_version = msgspec.json.Decoder(_Version)


def history_session(line: bytes) -> str | None:
    """The session whose history ``line`` is the next update of, or None when ``line``
    is anything else (not a ``session/update``, or one of a kind never recorded)."""
    found = update_of(line)
    if found is None or found[1] in NOT_RECORDED:
        return None
    return found[0]


def _run_end(lines: list[bytes], start: int, head: bytes) -> int:
    """The index of the first line from ``start`` on that does not go on the run whose
    updates start with ``head`` (``len(lines)`` when all do)."""
    offset, end, count = len(head), start, len(lines)
    while end < count:
        line = lines[end]
        if not line.startswith(head) or line.startswith(_UNRECORDED, offset):
            return end
        kind_end = line.find(b'"', offset)
        if kind_end < 0:
            end += 1
            continue
        # Every following line with this session and this (recorded) kind goes on the
        # run too: skip them with one C-level startswith each.
        same = methodcaller("startswith", line[: kind_end + 1])
        end += len(list(takewhile(same, islice(lines, end, None))))
    return end


class _Tracking:
    """The recording state of one stream: its stored part (the cursor itself for the
    connection's stream, a :class:`~acp2.store.cursors.Track` for a session's), the run
    going on and how its session's updates start (the hot path's test), and the highest
    seq its client acknowledged (folded into the cursor when stored)."""

    __slots__ = ("acked", "head", "run", "track")

    def __init__(self, track: StreamCursor | Track) -> None:
        self.track = track
        self.run: Run | None = None
        self.head = b""
        self.acked = track.base


class CursorRecorder:
    """Keeps and stores the cursor of one stream; see the module docstring.

    ``kind`` is the connection's: a ``"websocket"`` has one stream (:meth:`sent`,
    :meth:`ack`); an ``"http"`` connection has its connection stream and one per session
    (:meth:`sent_on`, :meth:`ack_on`), all stored in one row."""

    def __init__(
        self, store: CursorStore, stream_id: str, principal: str, kind: str = "websocket"
    ) -> None:
        self.store = store
        self.cursor = StreamCursor(
            id=stream_id, principal=principal, initialize=msgspec.Raw(b""), kind=kind
        )
        #: False once the stream cannot be resumed elsewhere (a v1 client, a failed write).
        self.enabled = True
        self._main = _Tracking(self.cursor)
        self._tracks: dict[str, _Tracking] = {}
        self._asked: dict[RequestId, str] = {}  # the client's open requests: id -> method
        self._asking: set[RequestId] = set()  # the agent's open requests
        self._dirty = False  # a mark was made since the cursor was last stored
        self._stored = False  # a row is stored (delete it when the stream ends)
        self._kept = 0  # bytes of the messages the marks keep
        self._stale = False  # a stored row may outlive a failed delete
        self._stale_since = 0.0
        self._stored_received = 0
        self.stored_at = 0.0

    @classmethod
    def resumed(cls, store: CursorStore, cursor: StreamCursor) -> CursorRecorder:
        """A recorder going on from ``cursor`` (a stream taken over from another node,
        whose client is at ``cursor.sent`` with ``cursor.counts``)."""
        recorder = cls(store, cursor.id, cursor.principal, cursor.kind)
        recorder.cursor = cursor
        recorder._main = _Tracking(cursor)
        recorder._tracks = {s: _Tracking(t) for s, t in cursor.streams.items()}
        return recorder

    @property
    def acked(self) -> int:
        """The highest seq the client acknowledged (the connection's stream)."""
        return self._main.acked

    # -- what the stream carries ------------------------------------------------------

    def sent(self, seq: int, line: bytes) -> None:
        """Note the message queued for the client under ``seq`` (the connection's stream)."""
        self._sent(self._main, None, seq, line)

    def sent_on(self, stream: str | None, seq: int, line: bytes) -> None:
        """Note the message queued under ``seq`` on ``stream``'s SSE stream (None: the
        connection's)."""
        self._sent(self._tracking_of(stream), stream, seq, line)

    def _tracking_of(self, stream: str | None) -> _Tracking:
        if stream is None:
            return self._main
        tracking = self._tracks.get(stream)
        if tracking is None:
            track = self.cursor.streams[stream] = Track()
            tracking = self._tracks[stream] = _Tracking(track)
        return tracking

    def _sent(self, tracking: _Tracking, stream: str | None, seq: int, line: bytes) -> None:
        tracking.track.sent = seq
        run, head = tracking.run, tracking.head
        if (
            run is not None
            and line.startswith(head)
            and not line.startswith(_UNRECORDED, len(head))
            and run.last == seq - 1
        ):
            run.last = seq  # the hot path: one session's updates, one after another
            return
        tracking.run = None
        if not self.enabled:
            return  # nothing is stored any more: keep no marks either
        self._dirty = True
        session = history_session(line)
        if session is None:
            self._other(tracking, seq, line)
            return
        if stream != session and self.cursor.kind != "websocket":
            # A session's history on a stream not its own (too many session streams):
            # its count no longer belongs to one stream's position.
            log.info("stream %s is no longer recorded: %s moved streams", self.cursor.id, session)
            self.disable()
            return
        self._first_sight(session)
        run = Run(session, seq, seq)
        tracking.track.marks.append(run)
        tracking.run = run
        tracking.head = run_head(session)

    def sent_all(self, first: int, lines: list[bytes]) -> None:
        """Note ``lines`` queued on the connection's stream under ``first``, ``first + 1``,
        ... (as :meth:`sent` each; a run that goes on is extended in one step)."""
        self._sent_all(self._main, None, first, lines)

    def sent_all_on(self, stream: str | None, first: int, lines: list[bytes]) -> None:
        """Note ``lines`` queued on ``stream``'s SSE stream (None: the connection's) under
        ``first``, ``first + 1``, ... (as :meth:`sent_on` each)."""
        self._sent_all(self._tracking_of(stream), stream, first, lines)

    def _sent_all(
        self, tracking: _Tracking, stream: str | None, first: int, lines: list[bytes]
    ) -> None:
        index, count = 0, len(lines)
        while index < count:
            run = tracking.run
            if run is not None and run.last == first + index - 1:
                end = _run_end(lines, index, tracking.head)
                if end > index:
                    run.last = first + end - 1
                    index = end
                    continue
            self._sent(tracking, stream, first + index, lines[index])
            index += 1
        tracking.track.sent = max(tracking.track.sent, first + count - 1)

    def _other(self, tracking: _Tracking, seq: int, line: bytes) -> None:
        keep = NOT_KEPT
        if len(line) <= MAX_KEPT and self._kept + len(line) <= MAX_KEPT_BYTES:
            keep = msgspec.Raw(line)
            self._kept += len(line)
        tracking.track.marks.append(Other(seq, keep))
        parsed = read(line)
        key = parsed.id
        if parsed.method is not None:
            session = parsed.session_id
            if session is not None:
                self._first_sight(session)
            if key is not None:
                self._asking.add(key)
        elif key is not None and self._asked.pop(key, None) == SESSION_NEW.name:
            session = result_session(parsed)
            if session:
                self._first_sight(session)

    def _first_sight(self, session: str) -> None:
        cursor = self.cursor
        if session not in cursor.counts and session not in cursor.lost:
            cursor.counts[session] = 0

    def took(self, message: bytes) -> None:
        """Note a message taken from the client (before the agent side sees it)."""
        parsed = read(message)
        key = parsed.id
        method = parsed.method
        if method is None:
            if key is not None:
                self._asking.discard(key)
            return
        if key is not None and (method != INITIALIZE.name or self.cursor.kind == "websocket"):
            self._asked[key] = method  # (over HTTP initialize is answered in the POST's body)
        if method == INITIALIZE.name and not len(self.cursor.initialize):
            self._initialized(message, parsed.message)
            return
        session = parsed.session_id
        if session is None:
            return
        if method in _JOINS:
            self.cursor.counts.pop(session, None)
            if session not in self.cursor.lost:
                self.cursor.lost.append(session)
        elif method == SESSION_CLOSE.name and session not in self.cursor.closed:
            self.cursor.closed.append(session)

    def _initialized(self, message: bytes, request: object) -> None:
        params = request.params if isinstance(request, Request) else None
        try:
            version = decode(_version, params).protocol_version if params else 0
        except InvalidRequest:
            version = 0
        if version < 2:
            self.disable()  # a v1 client (served through the bridge): not rebuilt
            return
        self.cursor.initialize = msgspec.Raw(message)

    def ack(self, upto: int) -> None:
        """The client acknowledged every seq up to ``upto`` (the connection's stream)."""
        main = self._main
        main.acked = max(main.acked, min(upto, self.cursor.sent))

    def ack_on(self, stream: str | None, upto: int) -> None:
        """The client acknowledged every seq up to ``upto`` of ``stream`` (None: the
        connection's). Past :data:`REFOLD_EVERY` seqs beyond the stored ``base`` the
        cursor is stored again, so a takeover rebuilds a bounded window."""
        tracking = self._main if stream is None else self._tracks.get(stream)
        if tracking is None:
            return
        tracking.acked = max(tracking.acked, min(upto, tracking.track.sent))
        if tracking.acked - tracking.track.base >= REFOLD_EVERY:
            self.store_now()

    # -- storing ----------------------------------------------------------------------

    def cover(self) -> None:
        """Store the cursor unless the stored one already describes every seq queued
        (call before writing them to the socket)."""
        if self.enabled:
            if self._dirty:
                self.store_now()
        elif self._stale and time.monotonic() - self._stale_since > RETRY_DELETE:
            self.forget()  # a row it no longer describes must not be trusted elsewhere

    def cover_received(self, seq: int) -> None:
        """Store the cursor unless it says the server took client seq ``seq`` already
        (call before acknowledging ``seq`` to the client)."""
        if self.enabled and seq > self._stored_received:
            self.cursor.received = seq
            self.store_now()

    def keepalive(self, every: float) -> None:
        """Store the cursor again when it was last stored over ``every`` seconds ago (an
        idle stream's row is not pruned as old)."""
        if self.enabled and self._stored and time.time() - self.stored_at > every:
            self.store_now()

    def store_now(self) -> None:
        """Fold what the client acknowledged into the counts and store the cursor; a
        failed write disables the recorder (a stream is never held up by its cursor)."""
        cursor = self.cursor
        if not self.enabled or not len(cursor.initialize):
            return  # not recorded, or nothing to rebuild from yet
        marks = self._fold_acked(self._main)
        for tracking in self._tracks.values():
            marks += self._fold_acked(tracking)
        if marks > MAX_MARKS:
            log.info("stream %s is no longer recorded: its client stopped acknowledging", cursor.id)
            self.disable()
            return
        cursor.pending = len(self._asked) + len(self._asking)
        try:
            self.store.save(cursor)
        except Exception as exc:
            log.warning("could not store the cursor of stream %s: %s", cursor.id, exc)
            self.disable()
            return
        self._dirty = False
        self._stored = True
        self._stored_received = cursor.received
        self.stored_at = time.time()

    def _fold_acked(self, tracking: _Tracking) -> int:
        """Fold what the client acknowledged of one stream into the counts; return how
        many marks the stream keeps."""
        track = tracking.track
        acked = tracking.acked
        marks = track.marks
        if acked <= track.base:
            return len(marks)
        drop = 0
        for mark in marks:
            if not self._fold(mark, acked):
                break
            drop += 1
        del marks[:drop]
        track.base = acked
        if tracking.run is not None and (not marks or marks[-1] is not tracking.run):
            tracking.run = None  # folded away: the next update starts a new run
        return len(marks)

    def _fold(self, mark: Run | Other, acked: int) -> bool:
        """Fold what of ``mark`` is acknowledged; True when all of it was."""
        if type(mark) is Other:
            if mark.seq > acked:
                return False
            if mark.kept:
                self._kept -= len(mark.message)
            return True
        assert type(mark) is Run
        if mark.first > acked:
            return False
        upto = min(mark.last, acked)
        counts = self.cursor.counts
        if mark.session in counts:
            counts[mark.session] += upto - mark.first + 1
        if upto < mark.last:
            mark.first = upto + 1
            return False
        return True

    def disable(self) -> None:
        """Stop recording and forget the stored cursor: a resume elsewhere is refused."""
        if not self.enabled:
            return
        self.enabled = False
        self.forget()

    def forget(self) -> None:
        """Delete the stored cursor (the stream ended, or is no longer recorded). When
        that fails, :meth:`cover` tries again now and then: a node taking over must not
        trust a row that no longer describes the stream."""
        if not self._stored and not self._stale:
            return
        self._stored = False
        try:
            self.store.delete(self.cursor.id)
        except Exception as exc:
            log.warning("could not delete the cursor of stream %s: %s", self.cursor.id, exc)
            self._stale, self._stale_since = True, time.monotonic()
            return
        self._stale = False

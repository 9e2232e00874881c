"""The rebuild of what a client of a taken-over stream missed, without I/O of its own.

:func:`plan` reads a stored :class:`~acp2.store.cursors.StreamCursor` and the client's
last seq: how many history updates of each session the client has (the counts, plus the
marks up to its seq; the stored cursor's last run is open-ended), and what came after --
runs of history updates, other messages kept as bytes (:func:`plan_streams`: every
stream of a Streamable HTTP connection, each from its stored base). It raises :class:`Unrestorable`,
with the close code the client falls back on, when the rebuild cannot be exact: a
request either way was unanswered, a session was joined midway (``lost``), a message
after the client's seq was too big to keep, a seq outside what the stream sent.
:func:`history_after` reads a session's stored updates after a count, and
:func:`rebuild` puts the missed messages in order (:mod:`acp2.serve.takeover_streams` does the
rest: the agent side, the leases, the queue).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from acp2.errors import Unrestorable
from acp2.rpc.update_frames import update_frame
from acp2.store.cursors import Other, Run, StreamCursor

if TYPE_CHECKING:
    from acp2.store.base import Batches

__all__ = [
    "Plan",
    "StreamsPlan",
    "Unrestorable",
    "history_after",
    "plan",
    "plan_streams",
    "rebuild",
    "rebuild_streams",
    "update_frame",
]


@dataclass
class Plan:
    """How to rebuild one stream for a client at seq ``last`` (see :func:`plan`)."""

    cursor: StreamCursor
    last: int
    #: Per session to resume: how many of its history updates the client has.
    positions: dict[str, int] = field(default_factory=dict)
    #: What was sent after ``last``, in order (runs clipped to the seqs after it).
    missed: list[Run | Other] = field(default_factory=list)


def plan(cursor: StreamCursor, last: int) -> Plan:
    """Work out what a client at seq ``last`` missed; raises :class:`Unrestorable`."""
    _check_connection(cursor)
    if cursor.kind != "websocket":
        raise Unrestorable(4404, "the stream is not a WebSocket")
    marks = cursor.marks
    open_run = bool(marks) and type(marks[-1]) is Run
    if last < cursor.base or (last > cursor.sent and not open_run):
        raise Unrestorable(4410, "Acp2-Last-Seq is outside what the stream sent")
    result = Plan(cursor, last, {s: n for s, n in cursor.counts.items() if s not in cursor.closed})
    for index, mark in enumerate(marks):
        if type(mark) is Run:
            end = max(mark.last, last) if index == len(marks) - 1 else mark.last
            _split_run(result, mark.session, mark.first, end)
        elif type(mark) is Other and mark.seq > last:
            if not mark.kept:
                raise Unrestorable(4404, "a message the client missed was too big to keep")
            result.missed.append(mark)
    return result


def _check_connection(cursor: StreamCursor) -> None:
    """Refuse what no stream of the connection can be rebuilt past."""
    if cursor.pending:
        raise Unrestorable(4404, "requests were unanswered when the stream's node went")
    if [s for s in cursor.lost if s not in cursor.closed]:
        raise Unrestorable(4404, "the stream joined a session midway")


@dataclass
class StreamsPlan:
    """How to rebuild every SSE stream of a Streamable HTTP connection (see
    :func:`plan_streams`): each stream is rebuilt from its stored ``base`` on, so a
    reopen with any ``Last-Event-ID`` from there gets exactly what it missed."""

    cursor: StreamCursor
    #: Per session to resume: how many of its history updates its stream's client has
    #: at that stream's base.
    positions: dict[str, int] = field(default_factory=dict)
    #: Per stream (None: the connection's, else the session's): the seq it is rebuilt
    #: after, and what it sent after that, in order.
    bases: dict[str | None, int] = field(default_factory=dict)
    missed: dict[str | None, list[Run | Other]] = field(default_factory=dict)

    def stream_plan(self, stream: str | None) -> Plan:
        """The one-stream :class:`Plan` of ``stream`` (for :func:`rebuild`)."""
        return Plan(self.cursor, self.bases.get(stream, 0), missed=self.missed.get(stream, []))


def plan_streams(cursor: StreamCursor) -> StreamsPlan:
    """Work out how to rebuild every stream of a Streamable HTTP connection from its
    stored ``base`` on (the client's ``Last-Event-ID`` of each is not known yet: each
    comes with its own reopen); raises :class:`Unrestorable` (``code`` a WebSocket close
    code: 4404 stands for HTTP 404, 4410 for 410)."""
    _check_connection(cursor)
    if cursor.kind != "http":
        raise Unrestorable(4404, "the stream is a WebSocket")
    result = StreamsPlan(cursor, {s: n for s, n in cursor.counts.items() if s not in cursor.closed})
    tracks: list[tuple[str | None, Any]] = [(None, cursor), *cursor.streams.items()]
    for stream, track in tracks:
        result.bases[stream] = track.base
        missed = result.missed[stream] = []
        for mark in track.marks:
            if type(mark) is Other and not mark.kept:
                raise Unrestorable(4404, "a message the client may miss was too big to keep")
            if type(mark) is Run and mark.session != stream:
                raise Unrestorable(4404, "a session's history went to another stream")
            missed.append(mark)
    return result


def rebuild_streams(
    result: StreamsPlan, tails: dict[str, list[bytes]]
) -> dict[str | None, list[bytes]]:
    """Per stream, the messages it sent after its base, in order (the history runs taken
    from ``tails``, the rest of each session's tail on that session's stream)."""
    streams: dict[str | None, list[bytes]] = {}
    for stream in {*result.missed, *tails}:
        own = {stream: tails[stream]} if stream is not None and stream in tails else {}
        streams[stream] = rebuild(result.stream_plan(stream), own)
    return streams


def _split_run(result: Plan, session: str, first: int, end: int) -> None:
    """Count the part of a run the client has; keep the part it missed."""
    seen = min(end, result.last) - first + 1
    if seen > 0 and session in result.positions:
        result.positions[session] += seen
    if end > result.last:
        result.missed.append(Run(session, max(first, result.last + 1), end))


def history_after(batches: Batches, session: str, skip: int) -> list[bytes]:
    """The update bodies in ``batches`` (a session's stored rows) after the first
    ``skip``; raises :class:`Unrestorable` when there are fewer (a write the client saw
    was lost). Closes ``batches``."""
    bodies = _bodies(batches)
    try:
        for _ in range(skip):
            if next(bodies, None) is None:
                raise Unrestorable(4404, f"the history of {session} is shorter than the stream")
        return list(bodies)
    finally:
        batches.close()


def _bodies(batches: Batches) -> Iterator[bytes]:
    for rows in batches:
        for row in rows:
            yield from row.split(b"\n")  # a row holds one flush's bodies


def rebuild(result: Plan, tails: dict[str, list[bytes]]) -> list[bytes]:
    """The messages the client missed, in order: the marks after its seq (history runs
    taken from ``tails``, other messages as kept), then the rest of each tail."""
    cursors = {s: 0 for s in tails}
    lines: list[bytes] = []
    for mark in result.missed:
        if type(mark) is Other:
            lines.append(bytes(mark.message))
            continue
        assert type(mark) is Run
        if mark.session not in tails:
            continue  # a session the client closed: it wants nothing more of it
        start, count = cursors[mark.session], mark.last - mark.first + 1
        bodies = tails[mark.session][start : start + count]
        if len(bodies) < count:
            raise Unrestorable(4404, f"the history of {mark.session} is shorter than the stream")
        cursors[mark.session] = start + count
        lines.extend(update_frame(mark.session, b) for b in bodies)
    for session, bodies in tails.items():
        lines.extend(update_frame(session, b) for b in bodies[cursors[session] :])
    return lines

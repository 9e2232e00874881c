"""The cursor of a durable Streamable HTTP connection, whose SSE streams (the
connection's and one per session) number their events on their own, and the plan that
rebuilds every one of them from its stored base (src/acp2/serve/cursor.py,
src/acp2/serve/takeover_plan.py); no server: the frames are the agent runtime's own, the
history a real SQLite store."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from test_serve_cursor import INIT, CountingCursors, S, T, chunk, frames_of, line

from acp2.agent import HistoryStore
from acp2.serve.cursor import REFOLD_EVERY, CursorRecorder
from acp2.serve.takeover_plan import (
    Unrestorable,
    history_after,
    plan,
    plan_streams,
    rebuild_streams,
)
from acp2.store.cursors import NOT_KEPT, Other, Run, StreamCursor, Track, decode_cursor

NOTE = line({"jsonrpc": "2.0", "method": "x/note", "params": {}})


def http_recorder(store: CountingCursors | None = None) -> CursorRecorder:
    rec = CursorRecorder(store or CountingCursors(), "conn-1", "alice", "http")
    rec.took(line(INIT))
    return rec


def made(rec: CursorRecorder, request_id: int, session: str, seq: int) -> None:
    """The client makes ``session``; its answer is ``seq`` of the connection's stream."""
    rec.took(line({"jsonrpc": "2.0", "id": request_id, "method": "session/new", "params": {}}))
    answer = {"jsonrpc": "2.0", "id": request_id, "result": {"sessionId": session}}
    rec.sent_on(None, seq, line(answer))


def test_each_stream_has_its_own_seqs_and_all_are_stored_in_one_row() -> None:
    store = CountingCursors()
    rec = http_recorder(store)
    made(rec, 1, S, 1)
    made(rec, 2, T, 2)
    for seq, frame in enumerate(frames_of(S, *(chunk(f"s{i} ") for i in range(5))), 1):
        rec.sent_on(S, seq, frame)
    for seq, frame in enumerate(frames_of(T, *(chunk(f"t{i} ") for i in range(3))), 1):
        rec.sent_on(T, seq, frame)
    rec.cover()
    assert store.saves == 1
    rec.ack_on(S, 3)
    rec.ack_on(None, 2)
    rec.store_now()
    cursor = rec.cursor
    assert cursor.pending == 0  # initialize was answered in the POST's body
    assert (cursor.base, cursor.sent, cursor.marks) == (2, 2, [])
    assert cursor.streams == {
        S: Track(base=3, sent=5, marks=[Run(S, 4, 5)]),
        T: Track(sent=3, marks=[Run(T, 1, 3)]),
    }
    assert cursor.counts == {S: 3, T: 0}
    stored = store.load("conn-1", max_age=60)
    assert stored is not None
    assert stored.kind == "http"
    assert stored.streams == cursor.streams


def test_a_sessions_history_on_a_stream_not_its_own_stops_the_recording() -> None:
    rec = http_recorder()
    made(rec, 1, S, 1)
    (update,) = frames_of(S, chunk("x"))
    rec.sent_on(None, 2, update)  # too many session streams: it went to the connection's
    assert not rec.enabled


def test_acknowledgements_far_past_the_stored_base_store_the_cursor_again() -> None:
    store = CountingCursors()
    rec = http_recorder(store)
    made(rec, 1, S, 1)
    frames = frames_of(S, *(chunk(".") for _ in range(REFOLD_EVERY + 10)))
    for seq, frame in enumerate(frames, 1):
        rec.sent_on(S, seq, frame)
    rec.cover()
    rec.ack_on(S, REFOLD_EVERY - 1)
    assert store.saves == 1  # one open run: nothing to store
    rec.ack_on(S, REFOLD_EVERY)
    assert store.saves == 2
    assert rec.cursor.streams[S].base == REFOLD_EVERY
    assert rec.cursor.counts == {S: REFOLD_EVERY}


def _cursor(**fields: Any) -> StreamCursor:
    base = {"id": "c", "principal": "p", "initialize": msgspec.Raw(line(INIT)), "kind": "http"}
    return StreamCursor(**{**base, **fields})


def test_the_plan_rebuilds_every_stream_from_its_base_from_the_history() -> None:
    store = HistoryStore(":memory:")
    for session in (S, T):
        store.create_session(session, "/tmp", [])
    on_s = frames_of(S, *(chunk(f"s{i} ") for i in range(6)), store=store)
    on_t = frames_of(T, *(chunk(f"t{i} ") for i in range(2)), store=store)
    untold = frames_of(T, chunk("t2 "), store=store)  # recorded, never queued
    answer = msgspec.Raw(line({"jsonrpc": "2.0", "id": 3, "result": {}}))
    cursor = _cursor(
        base=1,
        sent=2,
        counts={S: 2, T: 0},
        marks=[Other(2, msgspec.Raw(NOTE))],
        streams={
            S: Track(base=3, sent=6, marks=[Run(S, 4, 4), Other(5, answer), Run(S, 6, 6)]),
            T: Track(base=0, sent=2, marks=[Run(T, 1, 2)]),
        },
    )
    result = plan_streams(cursor)
    assert result.positions == {S: 2, T: 0}
    assert result.bases == {None: 1, S: 3, T: 0}
    tails = {s: history_after(store.row_batches(s), s, n) for s, n in result.positions.items()}
    rebuilt = rebuild_streams(result, tails)
    # Each stream from its base on; the open run of S went on past the stored seq.
    assert rebuilt[None] == [NOTE]
    assert rebuilt[S] == [on_s[2], bytes(answer), *on_s[3:]]
    assert rebuilt[T] == [*on_t, untold[0]]


@pytest.mark.parametrize(
    "fields",
    [
        {"pending": 1},
        {"lost": [S]},
        {"streams": {S: Track(sent=1, marks=[Other(1, NOT_KEPT)])}},  # too big to keep
        {"streams": {S: Track(sent=1, marks=[Run(T, 1, 1)])}},  # another session's history
        {"kind": "websocket"},
    ],
)
def test_the_streams_plan_refuses_what_it_cannot_rebuild_exactly(fields: dict[str, Any]) -> None:
    with pytest.raises(Unrestorable) as refused:
        plan_streams(_cursor(**fields))
    assert refused.value.code == 4404


def test_a_websocket_resume_never_takes_a_streamable_http_connection() -> None:
    with pytest.raises(Unrestorable):
        plan(_cursor(), 0)


def test_a_websocket_row_without_streams_reads_as_before() -> None:
    row = b'{"id":"w","principal":"p","initialize":{},"base":1,"sent":2,"marks":[["r","s",2,2]]}'
    cursor = decode_cursor(row)
    assert cursor is not None
    assert (cursor.kind, cursor.streams) == ("websocket", {})
    assert plan(cursor, 2).positions == {}

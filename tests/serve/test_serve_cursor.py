"""The cursor of a durable stream (src/acp2/serve/cursor.py) and the rebuild of what a
client missed from it (src/acp2/serve/takeover_plan.py), without a server: the
frames are the agent runtime's own (its Emitter), the history a real SQLite store."""

from __future__ import annotations

import itertools
import json
from typing import Any

import msgspec
import pytest

from acp2.agent import HistoryStore
from acp2.agent.emitter import Emitter
from acp2.schema import AgentMessageChunk, StateUpdate, TextContent
from acp2.serve.cursor import MAX_KEPT, MAX_KEPT_BYTES, MAX_MARKS, CursorRecorder, history_session
from acp2.serve.takeover_plan import Unrestorable, history_after, plan, rebuild, update_frame
from acp2.store.cursors import MemoryCursors, Other, Run, StreamCursor

S, T = "sess_a", "sess_b"
INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 2}}


class Frames:
    """A frame sink keeping what the emitter sends (the connection's place)."""

    congested = False

    def __init__(self) -> None:
        self.frames: list[bytes] = []

    def send_frame_nowait(self, frame: bytes) -> None:
        self.frames.append(frame)

    async def drain(self) -> None:
        """Never congested."""


class CountingCursors(MemoryCursors):
    """A memory cursor store that counts its writes."""

    def __init__(self) -> None:
        super().__init__()
        self.saves = 0

    def save(self, cursor: StreamCursor) -> None:
        self.saves += 1
        super().save(cursor)


def chunk(text: str) -> AgentMessageChunk:
    return AgentMessageChunk(message_id="m", content=TextContent(text=text))


def frames_of(session: str, *updates: Any, store: HistoryStore | None = None) -> list[bytes]:
    sink = Frames()
    emitter = Emitter(session, sink, store)
    for update in updates:
        emitter.emit(update)
    if store is not None:
        store.flush()
    return sink.frames


def line(message: dict[str, Any]) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode()


def recorder(store: MemoryCursors | None = None) -> CursorRecorder:
    rec = CursorRecorder(store or CountingCursors(), "stream-1", "alice")
    rec.took(line(INIT))
    return rec


def test_history_updates_are_told_from_every_other_message() -> None:
    (update,) = frames_of(S, chunk("hi"))
    (state,) = frames_of(S, StateUpdate(state="running"))
    assert history_session(update) == S
    assert history_session(state) is None  # never recorded, never replayed
    assert history_session(line({"jsonrpc": "2.0", "id": 1, "result": {}})) is None
    reordered = line(
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {"update": {"sessionUpdate": "x_custom"}, "sessionId": S},
        }
    )
    assert history_session(reordered) == S  # another layout is read properly


def test_a_run_of_one_sessions_updates_is_stored_once_however_long_it_grows() -> None:
    store = CountingCursors()
    rec = recorder(store)
    for seq, frame in enumerate(frames_of(S, *(chunk(f"{i} ") for i in range(500))), 1):
        rec.sent(seq, frame)
        rec.cover()
    assert store.saves == 1
    assert rec.cursor.marks == [Run(S, 1, 500)]
    (state,) = frames_of(S, StateUpdate(state="idle"))
    rec.sent(501, state)
    rec.cover()
    assert store.saves == 2
    assert rec.cursor.marks[-1] == Other(501, msgspec.Raw(state))


def test_acknowledged_seqs_are_folded_into_the_counts_when_stored() -> None:
    rec = recorder()
    frames = frames_of(S, *(chunk(f"{i} ") for i in range(10)))
    for seq, frame in enumerate(frames, 1):
        rec.sent(seq, frame)
    rec.sent(11, line({"jsonrpc": "2.0", "method": "x/note", "params": {}}))
    rec.ack(6)
    rec.store_now()
    assert rec.cursor.base == 6
    assert rec.cursor.counts == {S: 6}
    assert rec.cursor.marks[0] == Run(S, 7, 10)
    rec.ack(11)
    rec.store_now()
    assert rec.cursor.counts == {S: 10}
    assert rec.cursor.marks == []


def test_open_requests_either_way_and_sessions_joined_midway_are_recorded() -> None:
    rec = recorder()
    rec.store_now()
    assert rec.cursor.pending == 1  # initialize, unanswered
    rec.sent(1, line({"jsonrpc": "2.0", "id": 0, "result": {}}))
    rec.took(line({"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {}}))
    rec.sent(2, line({"jsonrpc": "2.0", "id": 1, "result": {"sessionId": S}}))
    rec.sent(3, line({"jsonrpc": "2.0", "id": 0, "method": "fs/read", "params": {}}))
    rec.store_now()
    assert rec.cursor.counts == {S: 0}  # a session made on this stream: counted from 0
    assert rec.cursor.pending == 1  # the agent's request
    rec.took(line({"jsonrpc": "2.0", "id": 0, "result": {}}))
    resume = {"sessionId": T, "cwd": "/tmp"}
    rec.took(line({"jsonrpc": "2.0", "id": 2, "method": "session/resume", "params": resume}))
    rec.sent(4, line({"jsonrpc": "2.0", "id": 2, "result": {}}))
    rec.store_now()
    assert rec.cursor.pending == 0
    assert rec.cursor.lost == [T]


def test_a_v1_client_is_not_recorded() -> None:
    store = CountingCursors()
    rec = CursorRecorder(store, "stream-1", "alice")
    rec.took(line({**INIT, "params": {"protocolVersion": 1}}))
    rec.sent(1, line({"jsonrpc": "2.0", "id": 0, "result": {}}))
    rec.cover()
    assert not rec.enabled
    assert store.saves == 0


def _cursor(**fields: Any) -> StreamCursor:
    base = {"id": "s", "principal": "p", "initialize": msgspec.Raw(line(INIT))}
    return StreamCursor(**{**base, **fields})


def test_the_plan_counts_what_the_client_has_and_keeps_what_it_missed() -> None:
    note = msgspec.Raw(line({"jsonrpc": "2.0", "method": "x/note", "params": {}}))
    cursor = _cursor(
        base=2,
        sent=12,
        counts={S: 2, T: 0},
        marks=[Run(S, 3, 6), Other(7, note), Run(T, 8, 9), Run(S, 10, 12)],
    )
    at_five = plan(cursor, 5)
    assert at_five.positions == {S: 5, T: 0}
    assert at_five.missed == [Run(S, 6, 6), Other(7, note), Run(T, 8, 9), Run(S, 10, 12)]
    # Past the stored seq, the open run went on: everything up to the client's seq was it.
    at_twenty = plan(cursor, 20)
    assert at_twenty.positions == {S: 2 + 4 + 11, T: 2}
    assert at_twenty.missed == []


@pytest.mark.parametrize(
    ("fields", "last", "code"),
    [
        ({"pending": 1}, 0, 4404),
        ({"lost": [S]}, 0, 4404),
        ({"sent": 3, "marks": [Other(3)]}, 2, 4404),  # missed a message too big to keep
        ({"base": 5, "sent": 8}, 4, 4410),  # below what the client acknowledged
        ({"sent": 3, "marks": [Other(3, msgspec.Raw(b"{}"))]}, 9, 4410),  # never sent
    ],
)
def test_the_plan_refuses_what_it_cannot_rebuild_exactly(
    fields: dict[str, Any], last: int, code: int
) -> None:
    with pytest.raises(Unrestorable) as refused:
        plan(_cursor(**fields), last)
    assert refused.value.code == code


def test_a_closed_session_is_neither_resumed_nor_rebuilt() -> None:
    cursor = _cursor(sent=3, counts={S: 0}, closed=[S], lost=[S], marks=[Run(S, 1, 3)])
    result = plan(cursor, 1)
    assert result.positions == {}
    assert rebuild(result, {}) == []


def test_the_rebuild_takes_the_missed_updates_from_the_history_in_order() -> None:
    store = HistoryStore(":memory:")
    for session in (S, T):
        store.create_session(session, "/tmp", [])
    sent = frames_of(S, *(chunk(f"s{i} ") for i in range(6)), store=store)
    sent += frames_of(T, chunk("t0 "), store=store)
    later = frames_of(S, chunk("s6 "), store=store)  # committed, never sent: the tail
    note = msgspec.Raw(line({"jsonrpc": "2.0", "method": "x/note", "params": {}}))
    cursor = _cursor(
        sent=8, counts={S: 0, T: 0}, marks=[Run(S, 1, 4), Other(5, note), Run(T, 6, 6)]
    )
    cursor.marks.append(Run(S, 7, 8))
    result = plan(cursor, 3)
    tails = {s: history_after(store.row_batches(s), s, n) for s, n in result.positions.items()}
    rebuilt = rebuild(result, tails)
    assert rebuilt == [sent[3], bytes(note), sent[6], sent[4], sent[5], later[0]]
    assert update_frame(S, b'{"x":1}').startswith(b'{"jsonrpc":"2.0","method":"session/update"')


def test_a_history_shorter_than_what_the_client_saw_is_refused() -> None:
    store = HistoryStore(":memory:")
    store.create_session(S, "/tmp", [])
    frames_of(S, chunk("only "), store=store)
    with pytest.raises(Unrestorable):
        history_after(store.row_batches(S), S, 2)
    cursor = _cursor(sent=3, counts={S: 0}, marks=[Run(S, 1, 3)])
    result = plan(cursor, 0)
    with pytest.raises(Unrestorable):
        rebuild(result, {S: history_after(store.row_batches(S), S, 0)})


def test_a_message_too_big_to_keep_is_marked_so() -> None:
    rec = recorder()
    big = line({"jsonrpc": "2.0", "method": "x/big", "params": {"t": "x" * MAX_KEPT}})
    rec.sent(1, big)
    mark = rec.cursor.marks[0]
    assert isinstance(mark, Other)
    assert not mark.kept


def test_a_cursor_stays_bounded_when_its_client_stops_acknowledging() -> None:
    store = CountingCursors()
    rec = recorder(store)
    note = line({"jsonrpc": "2.0", "method": "x/note", "params": {"t": "x" * 1000}})
    for seq in range(1, 1100):
        rec.sent(seq, note)
    kept = [m for m in rec.cursor.marks if isinstance(m, Other) and m.kept]
    assert sum(len(m.message) for m in kept) <= MAX_KEPT_BYTES
    assert not rec.cursor.marks[-1].kept  # type: ignore[union-attr]
    rec.store_now()
    assert store.load("stream-1", max_age=60) is not None
    for seq in range(1100, MAX_MARKS + 10):
        rec.sent(seq, note)
    rec.store_now()
    assert not rec.enabled  # no longer recorded, and its row is gone
    assert store.load("stream-1", max_age=60) is None
    rec.ack(MAX_MARKS + 9)
    rec.store_now()
    assert store.load("stream-1", max_age=60) is None


class FailingCursors(MemoryCursors):
    """A memory cursor store whose writes and deletes fail while ``broken``."""

    broken = False

    def save(self, cursor: StreamCursor) -> None:
        if self.broken:
            raise OSError("the database is gone")
        super().save(cursor)

    def delete(self, stream_id: str) -> None:
        if self.broken:
            raise OSError("the database is gone")
        super().delete(stream_id)


def test_a_row_a_failed_write_left_behind_is_deleted_once_the_store_is_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import acp2.serve.cursor as cursor_module

    store = FailingCursors()
    rec = recorder(store)
    rec.sent(1, line({"jsonrpc": "2.0", "id": 0, "result": {}}))
    rec.cover()
    assert store.load("stream-1", max_age=60) is not None
    store.broken = True
    rec.sent(2, line({"jsonrpc": "2.0", "method": "x/note", "params": {}}))
    rec.cover()  # the write fails: the stream goes on, no longer recorded
    assert not rec.enabled
    store.broken = False
    assert store.load("stream-1", max_age=60) is not None  # stale: it misses seq 2
    monkeypatch.setattr(cursor_module, "RETRY_DELETE", 0.0)
    rec.sent(3, line({"jsonrpc": "2.0", "method": "x/note", "params": {}}))
    rec.cover()
    assert store.load("stream-1", max_age=60) is None


def test_lines_noted_in_bulk_make_the_cursor_that_noting_each_makes() -> None:
    updates = [chunk(f"{i}") if i % 5 else StateUpdate(state="running") for i in range(40)]
    mixed = frames_of(S, *updates[:20]) + frames_of(T, *updates[20:30]) + frames_of(S, *updates)
    mixed.insert(7, line({"jsonrpc": "2.0", "id": 3, "result": {}}))
    one, bulk = recorder(), recorder()
    for seq, frame in enumerate(mixed, 1):
        one.sent(seq, frame)
    cuts = [0, 1, 2, 9, 10, 33, 34, 60, len(mixed)]
    for start, end in itertools.pairwise(cuts):
        bulk.sent_all(start + 1, mixed[start:end])
        if end == 33:
            bulk.ack(30)  # a fold between writes ends the run the next write goes on with
            bulk.store_now()
            one.ack(30)
    one.store_now()
    bulk.store_now()
    assert bulk.cursor == one.cursor
    assert bulk.cursor.sent == len(mixed)

"""The stream cursor stores (src/acp2/store/cursors.py, pg_cursors.py) on SQLite and on a
real PostgreSQL: what one node stores another reads, rows go with their stream, old rows
are pruned, and a row that does not decode is not trusted."""

from __future__ import annotations

import time
from collections.abc import Iterator

import msgspec
import pytest

from acp2.store import SessionStore
from acp2.store.cursors import (
    MemoryCursors,
    Other,
    Run,
    StreamCursor,
    decode_cursor,
    encode_cursor,
    open_cursors,
)
from helpers.stores import Backend


def _cursor(stream_id: str = "stream-1") -> StreamCursor:
    return StreamCursor(
        id=stream_id,
        principal="alice",
        initialize=msgspec.Raw(b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}'),
        received=4,
        base=10,
        sent=25,
        counts={"sess_a": 7},
        marks=[Run("sess_a", 11, 20), Other(21, msgspec.Raw(b'{"x":1}')), Other(22)],
    )


@pytest.fixture
def two_nodes(store_backend: Backend) -> Iterator[tuple[SessionStore, SessionStore]]:
    first, second = store_backend.open(), store_backend.open()
    try:
        yield first, second
    finally:
        first.close()
        second.close()


def test_a_cursor_stored_by_one_node_is_read_back_whole_by_another(
    two_nodes: tuple[SessionStore, SessionStore],
) -> None:
    mine, theirs = (open_cursors(s) for s in two_nodes)
    mine.save(_cursor())
    assert theirs.load("stream-1", max_age=60) == _cursor()
    changed = _cursor()
    changed.sent = 30
    mine.save(changed)  # a later write replaces the row
    loaded = theirs.load("stream-1", max_age=60)
    assert loaded is not None
    assert loaded.sent == 30
    assert theirs.load("another", max_age=60) is None
    mine.close()
    theirs.close()


def test_a_cursor_is_deleted_with_its_stream_and_old_ones_are_pruned(
    two_nodes: tuple[SessionStore, SessionStore],
) -> None:
    cursors = open_cursors(two_nodes[0])
    cursors.save(_cursor("gone"))
    cursors.save(_cursor("kept"))
    cursors.delete("gone")
    cursors.delete("never-stored")  # ignored
    assert cursors.load("gone", max_age=60) is None
    time.sleep(0.05)
    assert cursors.load("kept", max_age=0.01) is None  # too old to resume
    assert cursors.prune(max_age=60) == 0
    assert cursors.prune(max_age=0.01) == 1
    assert cursors.load("kept", max_age=60) is None
    cursors.close()


def test_the_cursor_store_follows_the_session_store(
    store_backend: Backend, tmp_path: object
) -> None:
    from acp2.agent import HistoryStore

    assert isinstance(open_cursors(HistoryStore(":memory:")), MemoryCursors)
    store = store_backend.open()
    try:
        kind = type(open_cursors(store)).__name__
        assert kind == ("SqliteCursors" if store_backend.name == "sqlite" else "PgCursors")
    finally:
        store.close()


def test_a_row_that_does_not_decode_is_not_trusted() -> None:
    assert decode_cursor(b"not json") is None
    assert decode_cursor(b'{"id":"x"}') is None  # fields missing
    assert decode_cursor(encode_cursor(_cursor())) == _cursor()


def test_the_memory_store_keeps_cursors_for_its_own_process_only() -> None:
    cursors = MemoryCursors()
    cursors.save(_cursor())
    assert cursors.load("stream-1", max_age=60) == _cursor()
    assert MemoryCursors().load("stream-1", max_age=60) is None

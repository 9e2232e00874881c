"""The history's write-ahead log is checkpointed by a thread of the store's own, never
inside a commit on the event loop (acp2.store.sqlite_tools.Checkpointer, issue 25)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from acp2.store.sqlite import HistoryStore


def rows_in_database_file(path: Path) -> int:
    """The update rows of the database file itself, without its write-ahead log."""
    db = sqlite3.connect(f"file:{path}?immutable=1", uri=True)
    try:
        return int(db.execute("SELECT COUNT(*) FROM updates").fetchone()[0])
    finally:
        db.close()


def test_the_stores_own_connection_never_checkpoints(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path / "history.sqlite3")
    assert store._db.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 0
    store.close()


def test_committed_pages_reach_the_database_file_through_the_checkpoint_thread(
    tmp_path: Path,
) -> None:
    path = tmp_path / "history.sqlite3"
    store = HistoryStore(path)
    store.create_session("s", "/tmp", [])
    for i in range(20):
        store.append("s", b'{"sessionUpdate":"x","n":%d}' % i)
        store.flush()
    checkpoints = store._checkpoints
    assert checkpoints is not None
    checkpoints.stop()  # a last look, then the thread ends: the store stays open
    assert rows_in_database_file(path) == 20
    store.close()


def test_a_store_in_memory_has_no_checkpoint_thread() -> None:
    assert HistoryStore(":memory:")._checkpoints is None

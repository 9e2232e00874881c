"""A session's ``updated_at`` is rewritten at most once a second while it streams
(acp2.store.stamps, issue 25): a flush no longer updates the sessions table every time,
yet ``session/list`` still orders by the newest update, and the stored value is never
more than two intervals old."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest

from acp2.store import stamps
from acp2.store.sqlite import HistoryStore
from acp2.store.stamps import STAMP_INTERVAL, stamp_text


class Clock:
    """Both clocks the stamps read, moved by the test."""

    def __init__(self) -> None:
        self.now = time.time()  # sessions are created on the real clock

    def time(self) -> float:
        return self.now

    def monotonic(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    fake = Clock()
    monkeypatch.setattr(stamps, "time", fake)
    return fake


def stored_updated_at(path: Path, session_id: str) -> str:
    """``updated_at`` as another process reads it now."""
    db = sqlite3.connect(path)
    try:
        return str(
            db.execute("SELECT updated_at FROM sessions WHERE id = ?", (session_id,)).fetchone()[0]
        )
    finally:
        db.close()


def session_updates(store: HistoryStore) -> list[str]:
    seen: list[str] = []
    store._db.set_trace_callback(seen.append)
    return seen


def opened(tmp_path: Path) -> tuple[HistoryStore, Path]:
    path = tmp_path / "history.sqlite3"
    store = HistoryStore(path)
    store.open_session("s", "/tmp", [])
    store.flush()
    return store, path


def test_flushes_within_an_interval_of_the_last_write_leave_updated_at_alone(
    tmp_path: Path, clock: Clock
) -> None:
    store, _ = opened(tmp_path)
    seen = session_updates(store)
    for i in range(50):
        clock.now += STAMP_INTERVAL / 100
        store.append("s", b'{"sessionUpdate":"x","n":%d}' % i)
        store.flush()
    assert not [sql for sql in seen if sql.startswith("UPDATE sessions SET updated_at")]
    assert len(list(store.updates("s"))) == 50


def test_a_list_first_writes_the_time_of_the_newest_update(tmp_path: Path, clock: Clock) -> None:
    store, path = opened(tmp_path)
    clock.now += STAMP_INTERVAL / 2
    store.append("s", b'{"sessionUpdate":"x"}')
    store.flush()
    (record,) = store.list_sessions()
    assert record.updated_at == stamp_text(clock.now)
    assert stored_updated_at(path, "s") == stamp_text(clock.now)


def test_a_streaming_session_gets_updated_at_at_most_two_intervals_late(
    tmp_path: Path, clock: Clock
) -> None:
    store, path = opened(tmp_path)
    for _ in range(40):
        clock.now += STAMP_INTERVAL / 10
        store.append("s", b'{"sessionUpdate":"x"}')
        store.flush()
        stored = stored_updated_at(path, "s")
        assert stored >= stamp_text(clock.now - 2 * STAMP_INTERVAL)


def test_the_last_touch_is_written_when_the_lease_ends(tmp_path: Path, clock: Clock) -> None:
    store, path = opened(tmp_path)
    clock.now += STAMP_INTERVAL / 3
    store.append("s", b'{"sessionUpdate":"x"}')
    store.flush()
    store.release("s")
    assert stored_updated_at(path, "s") == stamp_text(clock.now)

"""Store failures are mapped at the store boundary (acp2.store.failures, issue 25): every
public method of the SQLite store raises acp2's ``StoreUnusable`` naming the file, never
a ``sqlite3`` error, so the agent's per-request wrapper has nothing to catch."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from acp2.errors import HistoryWriteError, StoreUnusable
from acp2.store.sqlite import HistoryStore


def broken_store(tmp_path: Path, table: str) -> tuple[HistoryStore, Path]:
    """A store with one session and one stored update whose ``table`` another
    connection then drops (the store's own connection meets the damage)."""
    path = tmp_path / "history.sqlite3"
    store = HistoryStore(path)
    store.create_session("s", "/tmp", [])
    store.append("s", b'{"sessionUpdate":"x"}')
    store.flush()
    other = sqlite3.connect(path, isolation_level=None)
    other.execute(f"DROP TABLE {table}")
    other.close()
    return store, path


@pytest.mark.parametrize(
    "call",
    [
        lambda store: store.get_session("s"),
        lambda store: store.list_sessions(),
        lambda store: store.create_session("t", "/tmp", []),
        lambda store: store.update_session("s", title="new"),
    ],
    ids=["get", "list", "create", "update"],
)
def test_a_damaged_sessions_table_raises_store_unusable_naming_the_file(
    tmp_path: Path, call: Callable[[HistoryStore], Any]
) -> None:
    store, path = broken_store(tmp_path, "sessions")
    with pytest.raises(StoreUnusable) as caught:
        call(store)
    assert f"The session store {path} cannot be used" in caught.value.message
    assert isinstance(caught.value.__cause__, sqlite3.Error)


def test_reading_a_damaged_history_raises_store_unusable_while_iterating(
    tmp_path: Path,
) -> None:
    store, path = broken_store(tmp_path, "updates")
    with pytest.raises(StoreUnusable) as caught:
        list(store.updates("s"))
    assert str(path) in caught.value.message


def test_a_failed_flush_raises_a_history_write_error_that_is_a_store_unusable(
    tmp_path: Path,
) -> None:
    store, path = broken_store(tmp_path, "updates")
    store.append("s", b'{"sessionUpdate":"y"}')
    with pytest.raises(HistoryWriteError) as caught:
        store.flush()
    assert isinstance(caught.value, StoreUnusable)
    assert caught.value.code == -32603
    assert f"The session store {path} cannot be used" in caught.value.message
    assert store.queued_updates() == 1  # kept for a retry

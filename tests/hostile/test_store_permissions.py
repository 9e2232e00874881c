"""Attack: reading another user's conversations from the history database (issue 10).

The history holds every prompt and reply. It was created world-readable: the folder
0755, the database 0644. Now missing folders are created 0700 and the database and its
``-wal`` / ``-shm`` files 0600, whatever the umask; a file an older version left 0644 is
narrowed to 0600 when opened.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from acp2.agent import HistoryStore
from acp2.store.sqlite import default_store_path


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.fixture
def open_umask() -> Iterator[None]:
    """Run with umask 000: the modes must not depend on the caller's umask."""
    old = os.umask(0)
    try:
        yield
    finally:
        os.umask(old)


def _write(store: HistoryStore) -> None:
    store.create_session("s", "/tmp", [])
    store.append("s", b'{"sessionUpdate":"x"}')
    store.flush()


def test_a_new_history_store_is_private_to_its_owner(tmp_path: Path, open_umask: None) -> None:
    path = tmp_path / "data" / "acp2" / "agent.sqlite3"
    store = HistoryStore(path)
    _write(store)
    assert _mode(tmp_path / "data") == 0o700
    assert _mode(tmp_path / "data" / "acp2") == 0o700
    for name in ("agent.sqlite3", "agent.sqlite3-wal", "agent.sqlite3-shm"):
        assert _mode(path.parent / name) == 0o600, name
    store.close()


def test_the_default_store_under_a_fresh_home_is_private(
    tmp_path: Path, open_umask: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ACP2_DATA_DIR", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "share"))
    path = default_store_path("acp2-agent")
    store = HistoryStore(path)
    _write(store)
    assert _mode(path.parent) == 0o700
    assert _mode(path) == 0o600
    store.close()


def test_a_world_readable_store_left_by_an_older_version_is_narrowed(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    _write(HistoryStore(path))
    for name in ("old.sqlite3", "old.sqlite3-wal", "old.sqlite3-shm"):
        if (tmp_path / name).exists():
            os.chmod(tmp_path / name, 0o644)
    store = HistoryStore(path)
    _write_more(store)
    for name in ("old.sqlite3", "old.sqlite3-wal", "old.sqlite3-shm"):
        if (tmp_path / name).exists():
            assert _mode(tmp_path / name) == 0o600, name
    store.close()


def _write_more(store: HistoryStore) -> None:
    store.append("s", b'{"sessionUpdate":"y"}')
    store.flush()


def test_an_existing_folder_is_left_as_it_is(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    os.chmod(shared, 0o755)
    HistoryStore(shared / "agent.sqlite3").close()
    assert _mode(shared) == 0o755
    assert _mode(shared / "agent.sqlite3") == 0o600

"""What only the PostgreSQL store has to get right: nodes starting together on a new
database, a connection the server dropped, the database's clock deciding lease expiry.
(Everything both backends share runs on both: tests/agent, tests/hostile.)"""

from __future__ import annotations

import subprocess
import sys

import pytest

from acp2.errors import SessionInUse
from acp2.store.postgres import PostgresStore
from helpers import timeouts

_OPEN = (
    "import sys\n"
    "from acp2.store.postgres import PostgresStore\n"
    "store = PostgresStore(sys.argv[1])\n"
    "store.create_session(sys.argv[2], '/w', [])\n"
    "store.close()\n"
)


def test_several_processes_opening_a_new_database_at_once_all_create_the_schema(
    postgres_url: str,
) -> None:
    # CREATE TABLE IF NOT EXISTS run by two sessions at once can fail on the catalog's
    # unique index; the schema lock makes the others wait and then find the tables.
    children = [
        subprocess.Popen(
            [sys.executable, "-c", _OPEN, postgres_url, f"s{i}"], stderr=subprocess.PIPE, text=True
        )
        for i in range(4)
    ]
    for child in children:
        _, stderr = child.communicate(timeout=timeouts.RUN_TIMEOUT)
        assert child.returncode == 0, stderr
    store = PostgresStore(postgres_url)
    assert sorted(r.id for r in store.list_sessions()) == ["s0", "s1", "s2", "s3"]
    store.close()


def test_a_flush_on_a_connection_the_server_dropped_reconnects_and_stores_its_batch_once(
    postgres_url: str,
) -> None:
    store = PostgresStore(postgres_url)
    store.create_session("s", "/w", [])
    store.append("s", b'{"n":0}')
    store.flush()
    killer = PostgresStore(postgres_url)
    pid = store._db.info.backend_pid
    killer._db.execute("SELECT pg_terminate_backend(%s)", (pid,))
    store.append("s", b'{"n":1}')
    store.flush()
    assert store._db.info.backend_pid != pid
    assert list(killer.updates("s")) == [b'{"n":0}', b'{"n":1}']
    killer.close()
    store.close()


def test_lease_expiry_is_decided_by_the_database_clock_not_the_nodes(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = PostgresStore(postgres_url), PostgresStore(postgres_url, lease_ttl=30)
    first.create_session("s", "/w", [])
    first.acquire("s")
    # A node whose clock runs centuries ahead still sees the lease as live.
    monkeypatch.setattr("time.time", lambda: 1e12)
    with pytest.raises(SessionInUse):
        second.acquire("s")
    monkeypatch.undo()
    first.close()
    second.close()

"""``session/new`` requests read together share one commit (acp2.agent.group_commit,
issue 25): the store queues each new session's row and lease, and the handlers of one
pass of the event loop wait for one flush -- still before any of them is answered."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import sys
from pathlib import Path

import anyio
import pytest
from agent_harness import agent_harness, make_agent

from acp2.agent import HistoryStore
from acp2.client import connect_transport
from acp2.errors import RequestError
from acp2.transport.stdio import spawn_agent
from helpers.timeouts import TIMEOUT

pytestmark = pytest.mark.anyio

SESSIONS = 20


def traced(store: HistoryStore) -> list[tuple[str, bool]]:
    """Every statement the store's connection runs, and whether a transaction was open."""
    seen: list[tuple[str, bool]] = []
    db: sqlite3.Connection = store._db
    db.set_trace_callback(lambda sql: seen.append((sql, db.in_transaction)))
    return seen


async def test_session_new_requests_sent_together_are_committed_in_one_transaction(
    tmp_path: Path,
) -> None:
    store = HistoryStore(tmp_path / "history.sqlite3")
    agent = make_agent(store=store)
    async with agent_harness(agent, initialize=True) as h:
        seen = traced(store)
        ids: list[str] = []

        async def open_one() -> None:
            ids.append(await h.new_session())

        with anyio.fail_after(TIMEOUT):
            async with anyio.create_task_group() as tg:
                for _ in range(SESSIONS):
                    tg.start_soon(open_one)
        store._db.set_trace_callback(None)
    inserts = [in_tx for sql, in_tx in seen if sql.startswith("INSERT INTO sessions")]
    begins = [sql for sql, _ in seen if sql.startswith("BEGIN")]
    assert len(set(ids)) == SESSIONS
    assert inserts
    assert all(inserts)  # never an autocommit insert of its own
    assert len(begins) < SESSIONS // 4  # one per pass that read requests, not one each
    listed = {record.id for record in HistoryStore(tmp_path / "history.sqlite3").list_sessions()}
    assert set(ids) <= listed


async def test_what_the_client_received_survives_a_kill_of_the_agent(tmp_path: Path) -> None:
    """The durability docs/internals.md promises: an answered ``session/new`` and a turn
    whose ``idle`` reached the client are in the file when the agent dies at once after
    (SIGKILL: no flush at exit, no close)."""
    path = tmp_path / "history.sqlite3"
    argv = [sys.executable, "-m", "acp2", "test-agent", "--store", str(path)]
    with anyio.fail_after(TIMEOUT):
        async with (
            spawn_agent(argv, cwd=tmp_path) as proc,
            connect_transport(proc, cwd=tmp_path) as client,
        ):
            session = await client.new_session(str(tmp_path))
            await (await session.prompt("stream 5")).wait()
            os.kill(proc.pid, signal.SIGKILL)
            assert await proc.wait_exit(TIMEOUT)
    store = HistoryStore(path)
    assert [record.id for record in store.list_sessions()] == [session.id]
    kinds = [json.loads(body)["sessionUpdate"] for body in store.updates(session.id)]
    assert kinds.count("user_message") == 1
    assert kinds.count("agent_message_chunk") == 5
    store.close()


async def test_a_failed_group_commit_answers_each_session_new_with_the_stores_error(
    tmp_path: Path,
) -> None:
    path = tmp_path / "history.sqlite3"
    store = HistoryStore(path)
    agent = make_agent(store=store)
    async with agent_harness(agent, initialize=True) as h:
        other = sqlite3.connect(path, isolation_level=None)
        other.execute("DROP TABLE leases")  # the commit of the queued rows fails
        other.close()
        errors: list[RequestError] = []

        async def open_one() -> None:
            try:
                await h.new_session()
            except RequestError as exc:
                errors.append(exc)

        with anyio.fail_after(TIMEOUT):
            async with anyio.create_task_group() as tg:
                for _ in range(3):
                    tg.start_soon(open_one)
            assert await h.call("session/list", {}) is not None  # the connection lives
    assert len(errors) == 3
    assert all(e.code == -32603 and str(path) in e.message for e in errors)
    assert store.queued_updates() == 0
    assert store._opened == {}  # nothing of them is left to be written later
    db = sqlite3.connect(path)
    assert db.execute("SELECT COUNT(*) FROM sessions").fetchone()[0] == 0
    db.close()

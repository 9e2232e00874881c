"""Attack: two agent processes on one history file or database (issue 10, section 7;
issue 15, scale-out on PostgreSQL). Every test runs on both store backends.

``acp2 agent`` keeps every user's sessions in one SQLite file, so two editors mean two
agent processes on it. Before the fix the second process resuming a session reused
cached sequence numbers: ``UNIQUE constraint failed``, "writing anyway", and 80 of 165
updates of an alternating run were missing from history. Now every update either side
sent is stored, the second process is refused a session the first serves (``-32010``),
and it takes the session over once the first is gone -- even killed with SIGKILL.
"""

from __future__ import annotations

import os
import signal
import sys
import textwrap
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp2.client import ClientConnection, connect_transport
from acp2.errors import RequestError
from acp2.schema import StateUpdate
from acp2.store.leasing import LEASE_TTL_ENV, NODE_ENV
from acp2.transport.stdio import AgentProcess, spawn_agent
from helpers.stores import Backend
from helpers.timeouts import PROCESS_TIMEOUT as TIMEOUT

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def agent_on(
    store: str, cwd: Path, env: dict[str, str] | None = None
) -> AsyncIterator[tuple[ClientConnection, AgentProcess]]:
    """``acp2 test-agent --store store`` in a subprocess, with an initialized client."""
    argv = [sys.executable, "-m", "acp2", "test-agent", "--store", store]
    async with (
        spawn_agent(argv, grace=TIMEOUT, env=env) as process,
        connect_transport(process, cwd=cwd) as client,
    ):
        yield client, process


class Counter:
    """Counts the updates a client received that belong in history (not state)."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, update: Any, raw: bytes) -> None:
        if not isinstance(update, StateUpdate):
            self.count += 1


def stored(backend: Backend, session_id: str) -> list[bytes]:
    history = backend.open()
    try:
        return list(history.updates(session_id))
    finally:
        history.close()


async def turn(session: Any, text: str) -> None:
    work = await session.prompt(text)
    await work.wait()


async def test_two_processes_streaming_at_once_lose_no_update(
    tmp_path: Path, store_backend: Backend
) -> None:
    store = store_backend.spec
    counters: dict[str, Counter] = {}
    ids: dict[str, str] = {}

    async def run(key: str) -> None:
        async with agent_on(store, tmp_path) as (client, _):
            counters[key] = Counter()
            session = await client.new_session(tmp_path, on_update=counters[key])
            ids[key] = session.id
            for _ in range(3):
                await turn(session, "stream 1500")

    with anyio.fail_after(TIMEOUT * 3):
        async with anyio.create_task_group() as tg:
            tg.start_soon(run, "a")
            tg.start_soon(run, "b")
    for key in ("a", "b"):
        assert len(stored(store_backend, ids[key])) == counters[key].count > 4500


async def test_a_session_another_live_process_serves_is_refused_with_32010(
    tmp_path: Path, store_backend: Backend
) -> None:
    store = store_backend.spec
    with anyio.fail_after(TIMEOUT * 2):
        async with agent_on(store, tmp_path) as (a, process_a), agent_on(store, tmp_path) as (b, _):
            session = await a.new_session(tmp_path)
            await turn(session, "echo mine")
            with pytest.raises(RequestError) as refused:
                await b.resume(session.id, cwd=tmp_path, replay=True)
            with pytest.raises(RequestError) as not_deleted:
                await b.delete(session.id)
            await turn(session, "echo still mine")
    assert refused.value.code == not_deleted.value.code == -32010
    assert refused.value.data["pid"] == process_a.pid
    assert refused.value.data["sessionId"] == session.id
    assert "in use by another agent process" in refused.value.message


async def test_turns_alternating_between_two_processes_all_reach_history(
    tmp_path: Path, store_backend: Backend
) -> None:
    # The handoff is clean: closing the session (or the connection) ends the lease.
    store = store_backend.spec
    counter = Counter()
    with anyio.fail_after(TIMEOUT * 3):
        async with agent_on(store, tmp_path) as (a, _), agent_on(store, tmp_path) as (b, _):
            session = await a.new_session(tmp_path, on_update=counter)
            sid = session.id
            for i in range(4):
                client = b if i % 2 == 0 else a
                await session.close()
                session = await client.resume(sid, cwd=tmp_path, on_update=counter)
                await turn(session, f"echo turn number {i}")
    bodies = stored(store_backend, sid)
    assert len(bodies) == counter.count
    for i in range(4):
        assert any(f"number {i}".encode() in b for b in bodies)


async def test_a_session_is_taken_over_once_its_owner_was_killed_with_sigkill(
    tmp_path: Path, store_backend: Backend
) -> None:
    store = store_backend.spec
    counter = Counter()
    with anyio.fail_after(TIMEOUT * 2):
        async with agent_on(store, tmp_path) as (a, process_a):
            session = await a.new_session(tmp_path, on_update=counter)
            await turn(session, "echo before the kill")
            os.kill(process_a.pid, signal.SIGKILL)
        # SIGKILL released nothing: the dead process's lease is still in the file.
        assert _lease_pids(store_backend) == [process_a.pid]
        async with agent_on(store, tmp_path) as (b, _):
            resumed = await b.resume(session.id, cwd=tmp_path, replay=True)
            assert "before the kill" in resumed.state.agent_text()
            await turn(resumed, "echo after the takeover")
    bodies = stored(store_backend, session.id)
    assert len(bodies) >= counter.count + 4  # all A sent, then B: user message + 3 words
    assert sum(b"after the takeover" in b for b in bodies) == 1  # the user message
    assert sum(b"before the kill" in b for b in bodies) == 1


def _lease_pids(backend: Backend) -> list[int]:
    return [row[0] for row in backend.execute(f"SELECT pid FROM {backend.table('leases')}")]


_WRITER = textwrap.dedent(
    """
    import sys
    from acp2.agent.runtime import open_store
    store = open_store(sys.argv[1], "writer")
    for i in range(int(sys.argv[3])):
        body = ('{"sessionUpdate":"agent_message_chunk","messageId":"m","content":'
                '{"type":"text","text":"%s-%d"}}' % (sys.argv[2], i)).encode()
        store.append("shared", body)
        store.flush()
    store.close()
    """
)


async def test_two_writers_of_one_session_never_collide_on_sequence_numbers(
    tmp_path: Path, store_backend: Backend
) -> None:
    # What happens when a lease lapsed while its owner lived (e.g. frozen for longer than
    # the lease): both write one session. Sequence numbers come from SQLite, so no row
    # is refused and none is lost.
    store = store_backend.spec
    setup = store_backend.open()
    setup.create_session("shared", str(tmp_path), [])
    setup.close()
    count = 400
    with anyio.fail_after(TIMEOUT * 3):
        async with anyio.create_task_group() as tg:
            for name in ("a", "b"):
                argv = [sys.executable, "-c", _WRITER, store, name, str(count)]
                tg.start_soon(_run_checked, argv)
    bodies = stored(store_backend, "shared")
    assert len(bodies) == 2 * count
    for name in ("a", "b"):
        mine = [b for b in bodies if f'"{name}-'.encode() in b]
        assert [int(b.rsplit(b"-", 1)[1].split(b'"')[0]) for b in mine] == list(range(count))


async def _run_checked(argv: list[str]) -> None:
    result = await anyio.run_process(argv, check=False)
    assert result.returncode == 0, result.stderr.decode()[-2000:]


def _node(name: str, ttl: float) -> dict[str, str]:
    """The environment of an agent on node ``name`` with leases of ``ttl`` seconds."""
    return {**os.environ, NODE_ENV: name, LEASE_TTL_ENV: str(ttl)}


def _lease_expiry(backend: Backend, session_id: str) -> float:
    """Seconds until the lease of ``session_id`` expires (by the database's clock)."""
    leases = backend.table("leases")
    now = "strftime('%s', 'now')" if backend.name == "sqlite" else "extract(epoch from now())"
    ((left,),) = backend.execute(
        f"SELECT expires_at - {now} FROM {leases} WHERE session_id = '{session_id}'"
    )
    return float(left)


async def test_another_node_takes_a_session_over_only_once_the_dead_owners_lease_expired(
    tmp_path: Path, store_backend: Backend
) -> None:
    # Two nodes (one machine here, told apart by ACP2_NODE_NAME): node b cannot check
    # node a's pid, so only the lease's expiry can hand the session over. While a lives,
    # its heartbeat keeps the lease for longer than several ttls.
    ttl, store, counter = 2.0, store_backend.spec, Counter()
    with anyio.fail_after(TIMEOUT * 3):
        async with (
            agent_on(store, tmp_path, _node("a", ttl)) as (a, process_a),
            agent_on(store, tmp_path, _node("b", ttl)) as (b, _),
        ):
            session = await a.new_session(tmp_path, on_update=counter)
            await turn(session, "stream 200")
            await anyio.sleep(1.5 * ttl)  # the heartbeat renews; without it the lease lapses
            with pytest.raises(RequestError) as refused:
                await b.resume(session.id, cwd=tmp_path)
            os.kill(process_a.pid, signal.SIGKILL)
            assert await process_a.wait_exit(TIMEOUT)
            with pytest.raises(RequestError) as still_refused:
                await b.resume(session.id, cwd=tmp_path)  # dead, but its lease holds
            await anyio.sleep(max(0.0, _lease_expiry(store_backend, session.id)) + 0.2)
            resumed = await b.resume(session.id, cwd=tmp_path, replay=True)
            assert resumed.state.agent_text().endswith("198 199 ")
            await turn(resumed, "echo after the takeover")
    assert refused.value.code == still_refused.value.code == -32010
    assert refused.value.data["host"] == "a"
    bodies = stored(store_backend, session.id)
    assert len(bodies) >= counter.count + 2  # all a sent, then b's user message and echo
    assert sum(b"after the takeover" in b for b in bodies) == 1

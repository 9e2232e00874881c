"""Exactly-once prompts end to end: a real ``acp2 test-agent`` subprocess on a real store
(a SQLite file, a PostgreSQL database), killed mid-prompt, restarted on the same store,
and the prompt retried with its key (agentclientprotocol.com/rfds/v2/idempotency-keys;
issue 13, Done-when "Retrying a prompt after killing the connection mid-answer never runs
it twice")."""

from __future__ import annotations

import json
import os
import signal
import sys
import uuid
from pathlib import Path

import anyio
import pytest

from acp2.agent.dedupe import EXIT_AFTER_INSERT
from acp2.client import ClientSession, connect, new_idempotency_key
from acp2.errors import ConnectionClosed, RequestError
from acp2.schema import AgentMessageChunk
from helpers.stores import Backend
from helpers.timeouts import RUN_TIMEOUT, SCENARIO_TIMEOUT

pytestmark = pytest.mark.anyio

#: Runs ``acp2 test-agent`` after writing the process id to the file named first.
_WITH_PID = (
    "import os, sys; open(sys.argv[1], 'w').write(str(os.getpid()));"
    " from acp2.cli.main import main; sys.exit(main(sys.argv[2:]))"
)


def agent_argv(store: str, pid_file: Path | None = None) -> list[str]:
    """``acp2 test-agent --store STORE`` with this interpreter (reporting its pid)."""
    if pid_file is None:
        return [sys.executable, "-m", "acp2.cli.main", "test-agent", "--store", str(store)]
    return [sys.executable, "-c", _WITH_PID, str(pid_file), "test-agent", "--store", str(store)]


def _history(backend: Backend, session_id: str) -> list[dict[str, object]]:
    store = backend.open()
    try:
        return [json.loads(body) for body in store.updates(session_id)]
    finally:
        store.close()


def _kinds(history: list[dict[str, object]], kind: str) -> list[dict[str, object]]:
    return [update for update in history if update["sessionUpdate"] == kind]


async def _resume(client: object, session_id: str) -> ClientSession:
    session: ClientSession = await client.resume(session_id)  # type: ignore[attr-defined]
    return session


async def test_every_prompt_carries_a_fresh_key_the_agent_records(
    tmp_path: Path, store_backend: Backend
) -> None:
    store = store_backend.spec
    with anyio.fail_after(SCENARIO_TIMEOUT):
        async with connect(agent_argv(store), cwd=tmp_path) as client:
            session = await client.new_session()
            first = await session.prompt("echo one")
            await first.wait()
            second = await session.prompt("echo two")
            await second.wait()
    keys = [work.idempotency_key for work in (first, second)]
    assert keys[0] != keys[1]
    ledger = store_backend.open()
    for work, key in zip((first, second), keys, strict=True):
        assert isinstance(key, str)
        assert uuid.UUID(key).version == 4
        entry = ledger.find_prompt(session.id, key)
        assert entry is not None
        assert entry.message_id == work.message_id
    ledger.close()


async def test_a_retry_on_the_same_connection_returns_the_same_work_id_and_ends(
    tmp_path: Path, store_backend: Backend
) -> None:
    store = store_backend.spec
    key = new_idempotency_key()
    with anyio.fail_after(SCENARIO_TIMEOUT):
        async with connect(agent_argv(store), cwd=tmp_path) as client:
            session = await client.new_session()
            work = await session.prompt("echo once", idempotency_key=key)
            assert await work.wait() == "end_turn"
            retry = await session.prompt("echo once", idempotency_key=key)
            assert await retry.wait() is None  # nothing ran: the agent's idle snapshot
            with pytest.raises(RequestError) as refused:
                await session.prompt("echo another", idempotency_key=key)
    assert retry.message_id == work.message_id
    assert refused.value.code == -32602
    history = _history(store_backend, session.id)
    assert len(_kinds(history, "user_message")) == 1


async def test_a_prompt_retried_after_the_agent_died_between_insert_and_answer_runs_once(
    tmp_path: Path, store_backend: Backend
) -> None:
    """The agent commits the user message and its key, then exits before it answers
    (the test-only hook ACP2_TEST_EXIT_AFTER_INSERT); the retry on a new process gets the
    committed messageId, inserts nothing and starts no work."""
    store = store_backend.spec
    key = new_idempotency_key()
    crash_env = {**os.environ, EXIT_AFTER_INSERT: "1"}
    with anyio.fail_after(RUN_TIMEOUT):
        async with connect(agent_argv(store), cwd=tmp_path, env=crash_env) as client:
            session = await client.new_session()
            with pytest.raises(ConnectionClosed):
                await session.prompt("echo only once", idempotency_key=key)
        session_id = session.id
        (inserted,) = _kinds(_history(store_backend, session_id), "user_message")
        async with connect(agent_argv(store), cwd=tmp_path) as client:
            session = await _resume(client, session_id)
            retry = await session.prompt("echo only once", idempotency_key=key)
            assert await retry.wait() is None
    assert retry.message_id == inserted["messageId"]
    history = _history(store_backend, session_id)
    assert _kinds(history, "user_message") == [inserted]
    assert _kinds(history, "agent_message_chunk") == []  # at most once: here, never


async def test_a_prompt_retried_after_the_agent_was_killed_mid_answer_runs_once(
    tmp_path: Path, store_backend: Backend
) -> None:
    """SIGKILL while the work streams its answer (the prompt was answered, the work never
    ended); the retry on a restarted agent returns the same messageId and does not run
    the work again."""
    store, pid_file = store_backend.spec, tmp_path / "agent.pid"
    key = new_idempotency_key()
    with anyio.fail_after(RUN_TIMEOUT):
        async with connect(agent_argv(store, pid_file), cwd=tmp_path) as client:
            session = await client.new_session()
            work = await session.prompt("wait", idempotency_key=key)
            async for update in work:
                if isinstance(update, AgentMessageChunk):
                    break
            os.kill(int(pid_file.read_text()), signal.SIGKILL)
            with pytest.raises(ConnectionClosed):
                await work.wait()
        async with connect(agent_argv(store), cwd=tmp_path) as client:
            session = await _resume(client, session.id)
            retry = await session.prompt("wait", idempotency_key=key)
            assert await retry.wait() is None
    assert retry.message_id == work.message_id
    history = _history(store_backend, session.id)
    assert len(_kinds(history, "user_message")) == 1
    assert len(_kinds(history, "agent_message_chunk")) == 1  # the killed attempt's only


def test_a_fresh_key_is_a_random_version_4_uuid_in_its_canonical_text_form() -> None:
    keys = [new_idempotency_key() for _ in range(200)]
    assert len(set(keys)) == len(keys)
    for key in keys:
        parsed = uuid.UUID(key)
        assert str(parsed) == key
        assert parsed.version == 4
        assert parsed.variant == uuid.RFC_4122
    # The two random bits beside the variant take every value (not fixed by the build).
    assert {key[19] for key in keys} == set("89ab")

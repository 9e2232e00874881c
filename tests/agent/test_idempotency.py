"""Exactly-once prompts on the agent runtime: the dedupe ledger and the prompt handler
(agentclientprotocol.com/rfds/v2/idempotency-keys; issue 13 "Exactly-once prompts")."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from agent_harness import agent_harness, make_agent

from acp2.agent import HistoryStore, Turn
from acp2.errors import RequestError
from acp2.schema import TextContent
from acp2.store import SessionStore
from acp2.store.ledger import PromptEntry, prompt_digest
from helpers.stores import Backend

pytestmark = pytest.mark.anyio


def _keyed(session_id: str, text: str, key: str) -> dict[str, Any]:
    blocks = [{"type": "text", "text": text}]
    return {"sessionId": session_id, "prompt": blocks, "idempotencyKey": key}


def _counting_agent(store: SessionStore, calls: list[str], gate: anyio.Event | None = None) -> Any:
    agent = make_agent(store=store)

    @agent.prompt
    async def handle(turn: Turn) -> str:
        calls.append(turn.text)
        if gate is not None:
            await gate.wait()
        await turn.say(f"ran {turn.text}")
        return "end_turn"

    return agent


def _user_messages(store: SessionStore, session_id: str) -> list[bytes]:
    return [
        b for b in store.updates(session_id) if b.startswith(b'{"sessionUpdate":"user_message"')
    ]


def _entry(session_id: str, key: str, message_id: str = "user_1") -> PromptEntry:
    digest = prompt_digest([TextContent(text=key)])
    return PromptEntry(
        session_id, key, digest, message_id, b'{"messageId":"%s"}' % message_id.encode()
    )


async def test_a_retried_key_is_answered_with_the_original_message_id_and_runs_nothing() -> None:
    calls: list[str] = []
    store = HistoryStore(":memory:")
    async with agent_harness(_counting_agent(store, calls), initialize=True) as h:
        sid = await h.new_session()
        first = await h.call("session/prompt", _keyed(sid, "hello", "k1"))
        await h.wait_idle(sid)
        again = await h.call("session/prompt", _keyed(sid, "hello", "k1"))
        snapshot = await h.wait_idle(sid, 2)  # no work for a retry: the state says so
        other = await h.call("session/prompt", _keyed(sid, "hello", "k2"))
        await h.wait_idle(sid, 3)
    assert again == first
    assert "stopReason" not in snapshot
    assert h.index(lambda f: f.update is snapshot) > h.response_index(
        h.request_id("session/prompt", 1)
    )
    assert other["messageId"] != first["messageId"]
    assert calls == ["hello", "hello"]  # k1 once, k2 once
    assert len(_user_messages(store, sid)) == 2


async def test_a_key_reused_with_a_different_prompt_is_refused_and_inserts_nothing() -> None:
    calls: list[str] = []
    store = HistoryStore(":memory:")
    async with agent_harness(_counting_agent(store, calls), initialize=True) as h:
        sid = await h.new_session()
        first = await h.call("session/prompt", _keyed(sid, "hello", "k1"))
        await h.wait_idle(sid)
        with pytest.raises(RequestError) as refused:
            await h.call("session/prompt", _keyed(sid, "something else", "k1"))
    assert refused.value.code == -32602
    assert refused.value.data == {"idempotencyKey": "k1", "messageId": first["messageId"]}
    assert calls == ["hello"]
    assert len(_user_messages(store, sid)) == 1


async def test_a_retry_sent_while_the_first_attempt_runs_gets_its_id_without_waiting() -> None:
    calls: list[str] = []
    gate = anyio.Event()
    store = HistoryStore(":memory:")
    async with agent_harness(_counting_agent(store, calls, gate), initialize=True) as h:
        sid = await h.new_session()
        first = await h.call("session/prompt", _keyed(sid, "slow", "k1"))
        again = await h.call("session/prompt", _keyed(sid, "slow", "k1"))
        gate.set()
        await h.wait_idle(sid)
    assert again == first
    assert calls == ["slow"]
    states = [u.get("state") for u in h.updates(sid) if u["sessionUpdate"] == "state_update"]
    assert states == ["running", "running", "idle"]  # the work, the retry's snapshot, idle


async def test_two_attempts_of_one_key_sent_while_the_session_is_busy_insert_it_once() -> None:
    calls: list[str] = []
    gate = anyio.Event()
    store = HistoryStore(":memory:")
    async with agent_harness(_counting_agent(store, calls, gate), initialize=True) as h:
        sid = await h.new_session()
        await h.call("session/prompt", _keyed(sid, "busy", "k0"))  # holds the slot
        answers: list[Any] = []

        async def send() -> None:
            answers.append(await h.call("session/prompt", _keyed(sid, "twice", "k1")))

        async with anyio.create_task_group() as tg:
            tg.start_soon(send)
            tg.start_soon(send)
            await h.wait_for(lambda: len(h.requests("session/prompt")) == 3)
            gate.set()
        # The second attempt finds the key before or after its wait for the slot (the
        # order its request is dispatched in decides); either way it inserts nothing.
        await h.wait_idle(sid, 2)
    assert answers[0] == answers[1]
    assert calls == ["busy", "twice"]
    assert len(_user_messages(store, sid)) == 2


async def test_the_key_survives_an_agent_restart_on_the_same_store(
    store_backend: Backend,
) -> None:
    calls: list[str] = []
    first_store = store_backend.open()
    async with agent_harness(_counting_agent(first_store, calls), initialize=True) as h:
        sid = await h.new_session()
        first = await h.call("session/prompt", _keyed(sid, "hello", "k1"))
        await h.wait_idle(sid)
    first_store.close()
    store = store_backend.open()
    async with agent_harness(_counting_agent(store, calls), initialize=True) as h:
        await h.call("session/resume", {"sessionId": sid, "cwd": "/tmp/acp2-agent-tests"})
        again = await h.call("session/prompt", _keyed(sid, "hello", "k1"))
        await h.wait_idle(sid, 2)  # resume's snapshot, the retry's snapshot
    assert again == first
    assert calls == ["hello"]
    assert len(_user_messages(store, sid)) == 1


async def test_a_prompt_without_a_key_is_inserted_every_time() -> None:
    calls: list[str] = []
    store = HistoryStore(":memory:")
    async with agent_harness(_counting_agent(store, calls), initialize=True) as h:
        sid = await h.new_session()
        await h.turn(sid, "same")
        await h.turn(sid, "same")
    assert calls == ["same", "same"]


def test_the_ledger_commits_a_key_with_the_flush_of_its_user_message(
    store_backend: Backend,
) -> None:
    store = store_backend.open()
    store.create_session("s1", "/tmp", [])
    store.append("s1", b'{"sessionUpdate":"user_message","messageId":"user_1","content":[]}')
    store.remember_prompt(_entry("s1", "k1"))
    other = store_backend.open()
    assert other.find_prompt("s1", "k1") is None  # queued, not committed: neither is stored
    assert store.find_prompt("s1", "k1") == _entry("s1", "k1")  # this store sees its queue
    store.flush()
    assert other.find_prompt("s1", "k1") == _entry("s1", "k1")
    assert len(_user_messages(other, "s1")) == 1


def test_the_ledger_keeps_only_the_newest_keys_of_each_session(store_backend: Backend) -> None:
    store: Any = store_backend.open()
    store.keys_per_session = 3
    for n in range(5):
        store.remember_prompt(_entry("s1", f"k{n}"))
        store.remember_prompt(_entry("s2", f"k{n}"))
        store.flush()
    assert [store.find_prompt("s1", f"k{n}") is not None for n in range(5)] == [
        False,
        False,
        True,
        True,
        True,
    ]
    assert store.find_prompt("s2", "k4") is not None


def test_deleting_a_session_forgets_its_keys(store_backend: Backend) -> None:
    store = store_backend.open()
    store.create_session("s1", "/tmp", [])
    store.remember_prompt(_entry("s1", "k1"))
    store.flush()
    store.delete_session("s1")
    assert store.find_prompt("s1", "k1") is None


def test_a_new_key_of_a_session_this_store_created_is_answered_without_a_query(
    tmp_path: Any,
) -> None:
    store = HistoryStore(tmp_path / "h.db")
    lookups: list[str] = []
    store._db.set_trace_callback(lambda sql: lookups.append(sql) if "prompt_keys" in sql else None)
    store.create_session("s1", "/tmp", [])
    store.acquire("s1")
    assert store.find_prompt("s1", "k1") is None
    assert not [sql for sql in lookups if sql.startswith("SELECT")]
    store.remember_prompt(_entry("s1", "k1"))
    store.flush()
    assert store.find_prompt("s1", "k1") == _entry("s1", "k1")  # one of ours: asked
    assert store.find_prompt("s2", "k1") is None  # a session it did not create: asked
    assert len([sql for sql in lookups if sql.startswith("SELECT")]) == 2
    store.close()


def test_a_key_another_store_committed_after_the_lease_changed_hands_is_found(
    tmp_path: Any,
) -> None:
    first = HistoryStore(tmp_path / "h.db")
    first.create_session("s1", "/tmp", [])
    first.acquire("s1")
    first.release("s1")
    second = HistoryStore(tmp_path / "h.db")
    second.acquire("s1")
    second.remember_prompt(_entry("s1", "k1"))
    second.flush()
    second.release("s1")
    first.acquire("s1")
    assert first.find_prompt("s1", "k1") == _entry("s1", "k1")
    first.close()
    second.close()


def test_a_fresh_session_past_its_key_budget_goes_back_to_stored_lookups(tmp_path: Any) -> None:
    store = HistoryStore(tmp_path / "h.db")
    store.keys_per_session = 2
    store.create_session("s1", "/tmp", [])
    for n in range(3):
        store.remember_prompt(_entry("s1", f"k{n}"))
        store.flush()
    assert "s1" not in store._fresh  # bounded: the session's keys are no longer held
    assert store.find_prompt("s1", "k2") is not None
    store.close()

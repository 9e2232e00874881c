"""A second client attaches to a live session (``_acp2/session/attach``, issue 15): the
snapshot, the live stream, observers' refusals, who may attach, and leaving."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from agent_harness import CWD, make_agent
from attach_harness import ATTACH, attach, clients

from acp2.agent import Agent, Turn
from acp2.agent.runtime import runtime_for
from acp2.agent.session_hub import AttachQuery
from acp2.errors import (
    InvalidParams,
    InvalidRequest,
    MethodNotFound,
    ResourceNotFound,
    SessionInUse,
)
from helpers.timeouts import TIMEOUT

pytestmark = pytest.mark.anyio


def _agent(gate: anyio.Event | None = None, **config: Any) -> Agent:
    """Says a few things; with ``wait`` in the prompt, waits for ``gate`` in between."""
    agent = make_agent(**config)

    @agent.prompt
    async def handle(turn: Turn) -> str:
        await turn.say(f"heard {turn.text}")
        if "wait" in turn.text and gate is not None:
            await gate.wait()
        await turn.think("done thinking")
        call = await turn.tool_call("Look", kind="read")
        await call.complete()
        await turn.say("bye")
        return "end_turn"

    return agent


def _kinds(updates: list[dict[str, Any]]) -> list[str]:
    return [u["sessionUpdate"] for u in updates]


async def test_an_observer_gets_the_history_then_the_state_before_its_answer() -> None:
    async with clients(_agent(), None, None) as (owner, watcher):
        sid = await owner.new_session()
        await owner.turn(sid, "first")
        result = await attach(watcher, sid)
        answered = watcher.response_index(watcher.request_id(ATTACH))
    assert result["role"] == "observer"
    assert result["cwd"] == CWD
    kinds = _kinds(watcher.updates(sid))
    assert kinds[-3:] == ["replay_complete", "state_update", "available_commands_update"] or (
        kinds[-2:] == ["replay_complete", "state_update"]
    )
    assert watcher.updates(sid)[kinds.index("state_update")]["state"] == "idle"
    replayed = watcher.updates(sid)[: kinds.index("replay_complete")]
    owned = [u for u in owner.updates(sid) if u["sessionUpdate"] != "state_update"]
    assert [u.get("messageId") for u in replayed][:2] == [u.get("messageId") for u in owned][:2]
    last_update = max(i for i, f in enumerate(watcher.frames) if f.update is not None)
    assert last_update < answered


async def test_an_observer_sees_the_next_turn_exactly_as_the_owner_does() -> None:
    async with clients(_agent(), None, None) as (owner, watcher):
        sid = await owner.new_session()
        await owner.turn(sid, "first")
        await attach(watcher, sid)
        mine, theirs = len(owner.updates(sid)), len(watcher.updates(sid))
        idles = len(watcher.idles(sid))
        await owner.turn(sid, "second")
        await watcher.wait_idle(sid, idles + 1)
        assert watcher.updates(sid)[theirs:] == owner.updates(sid)[mine:]
    assert _kinds(owner.updates(sid)[mine:])[:3] == [
        "user_message",
        "state_update",
        "agent_message_chunk",
    ]


async def test_an_observers_prompt_and_config_change_are_refused_with_its_role() -> None:
    async with clients(_agent(), None, None) as (owner, watcher):
        sid = await owner.new_session()
        await attach(watcher, sid)
        with pytest.raises(InvalidRequest) as refused:
            await watcher.prompt(sid, "mine now")
        with pytest.raises(InvalidRequest):
            await watcher.call(
                "session/set_config_option",
                {"sessionId": sid, "configId": "x", "type": "id", "value": "y"},
            )
        await owner.turn(sid, "still mine")
    assert refused.value.code == -32600
    assert refused.value.data == {"sessionId": sid, "role": "observer"}
    assert "observer" in str(refused.value)


async def test_an_observers_cancel_is_ignored_and_the_work_goes_on() -> None:
    gate = anyio.Event()
    async with clients(_agent(gate), None, None) as (owner, watcher):
        sid = await owner.new_session()
        await attach(watcher, sid)
        await owner.prompt(sid, "wait")
        await watcher.cancel(sid)
        await watcher.call("session/list", {})  # answered after the cancel was handled
        gate.set()
        idle = await owner.wait_idle(sid)
    assert idle["stopReason"] == "end_turn"


async def test_a_controllers_cancel_ends_the_work_with_one_idle_everyone_sees() -> None:
    gate = anyio.Event()
    async with clients(_agent(gate), None, None) as (owner, helper):
        sid = await owner.new_session()
        await attach(helper, sid, "controller")
        before = len(helper.idles(sid))
        await owner.prompt(sid, "wait")
        await helper.wait_for(lambda: any(u.get("state") == "running" for u in helper.updates(sid)))
        await helper.cancel(sid)
        mine = await owner.wait_idle(sid)
        theirs = await helper.wait_idle(sid, before + 1)
    assert mine == theirs
    assert mine["stopReason"] == "cancelled"
    assert len(owner.idles(sid)) == 1
    assert len(helper.idles(sid)) == before + 1


async def test_a_controller_can_prompt_and_the_owner_sees_its_turn() -> None:
    async with clients(_agent(), None, None) as (owner, helper):
        sid = await owner.new_session()
        await attach(helper, sid, "controller")
        await helper.turn(sid, "from the helper")
        idle = await owner.wait_idle(sid)
    assert idle["stopReason"] == "end_turn"
    assert any("from the helper" in str(u.get("content")) for u in owner.updates(sid))


async def test_the_owner_leaving_mid_turn_leaves_the_observers_stream_running_to_idle() -> None:
    gate = anyio.Event()
    agent = _agent(gate)
    async with clients(agent, None, None) as found:
        owner, watcher = found
        sid = await owner.new_session()
        await attach(watcher, sid)
        await owner.prompt(sid, "wait")
        await watcher.wait_for(lambda: "agent_message_chunk" in _kinds(watcher.updates(sid)))
        await owner.connection.aclose()
        await anyio.wait_all_tasks_blocked()  # the agent has handled the owner's end
        assert not found.served[0].is_set()  # its connection waits for the shared work
        gate.set()
        idle = await watcher.wait_for(lambda: watcher.idles(sid)[1:])
        assert sid in agent.history().leases.held()
    assert idle[0]["stopReason"] == "end_turn"
    assert _kinds(watcher.updates(sid))[-3:] == [
        "tool_call_update",
        "agent_message_chunk",
        "state_update",
    ]
    assert sid not in agent.history().leases.held()


async def test_the_last_client_leaving_cancels_the_work_the_first_one_started() -> None:
    gate = anyio.Event()  # never set: only a cancel ends the turn
    agent = _agent(gate)
    async with clients(agent, None, None) as found:
        owner, watcher = found
        sid = await owner.new_session()
        await attach(watcher, sid)
        await owner.prompt(sid, "wait")
        await watcher.wait_for(lambda: "agent_message_chunk" in _kinds(watcher.updates(sid)))
        await owner.connection.aclose()
        await anyio.wait_all_tasks_blocked()
        assert not found.served[0].is_set()  # its connection waits for the shared work
        await watcher.connection.aclose()
        with anyio.fail_after(TIMEOUT):
            await found.served[0].wait()
    assert sid not in agent.history().leases.held()


async def test_closing_detaches_one_client_and_the_session_goes_on_for_the_other() -> None:
    async with clients(_agent(), None, None) as (owner, helper):
        sid = await owner.new_session()
        await attach(helper, sid, "controller")
        await owner.call("session/close", {"sessionId": sid})
        idle = await helper.turn(sid, "after the owner left")
        with pytest.raises(ResourceNotFound):
            await owner.prompt(sid, "me again")
    assert idle["stopReason"] == "end_turn"
    assert not [f for f in owner.frames[-3:] if f.update is not None]


async def test_a_client_of_another_principal_cannot_attach_or_resume_a_live_session() -> None:
    async with clients(_agent(), "alice", "mallory", "alice") as (alice, mallory, laptop):
        sid = await alice.new_session()
        with pytest.raises(ResourceNotFound) as refused:
            await attach(mallory, sid)
        with pytest.raises(ResourceNotFound) as unknown:
            await attach(mallory, "sess_nobody")
        with pytest.raises(ResourceNotFound):  # as for an unknown id: nothing leaks
            await mallory.call("session/resume", {"sessionId": sid, "cwd": CWD})
        assert (await attach(laptop, sid))["role"] == "observer"
    assert str(refused.value) == str(unknown.value).replace("sess_nobody", sid)
    assert refused.value.data == {"sessionId": sid}
    assert not [f for f in mallory.frames if f.update is not None]


async def test_the_may_attach_hook_decides_and_may_be_async() -> None:
    asked: list[AttachQuery] = []

    async def observers_only(query: AttachQuery) -> bool:
        asked.append(query)
        return query.role == "observer"

    async with clients(_agent(may_attach=observers_only), "a", "b") as (owner, other):
        sid = await owner.new_session()
        with pytest.raises(ResourceNotFound):
            await attach(other, sid, "controller")
        await attach(other, sid, "observer")
    assert [(q.role, q.principal, q.owner) for q in asked] == [
        ("controller", "b", "a"),
        ("observer", "b", "a"),
    ]


async def test_attaching_twice_or_with_an_unknown_role_is_refused() -> None:
    async with clients(_agent(), None, None) as (owner, watcher):
        sid = await owner.new_session()
        with pytest.raises(InvalidRequest):
            await attach(owner, sid)
        with pytest.raises(InvalidParams):
            await attach(watcher, sid, "admin")
        await attach(watcher, sid)
        with pytest.raises(InvalidRequest):
            await attach(watcher, sid)


async def test_attach_is_advertised_and_served_only_when_enabled() -> None:
    async with clients(_agent(), None) as (on,):
        meta = (await on.initialize())["capabilities"]["session"]["_meta"]
    assert meta["acp2"]["attach"] == {"roles": ["observer", "controller"]}
    async with clients(_agent(attach=False), None, None) as (owner, watcher):
        sid = await owner.new_session()
        session = (await watcher.initialize())["capabilities"]["session"]
        assert "attach" not in session.get("_meta", {}).get("acp2", {})
        with pytest.raises(MethodNotFound):
            await attach(watcher, sid)


async def test_a_resume_on_another_connection_joins_the_live_session() -> None:
    gate = anyio.Event()
    async with clients(_agent(gate), None, None) as (owner, other):
        sid = await owner.new_session()
        await owner.prompt(sid, "wait")
        await other.call(
            "session/resume", {"sessionId": sid, "cwd": CWD, "replayFrom": {"type": "start"}}
        )
        states = [u["state"] for u in other.updates(sid) if u["sessionUpdate"] == "state_update"]
        gate.set()
        mine = await owner.wait_idle(sid)
        theirs = await other.wait_idle(sid)
    assert states == ["running"]  # the one session, busy: not a second idle one
    assert mine == theirs


async def test_a_session_another_client_holds_cannot_be_deleted_under_it() -> None:
    async with clients(_agent(), None, None) as (owner, watcher):
        sid = await owner.new_session()
        await attach(watcher, sid)
        with pytest.raises(SessionInUse):
            await owner.call("session/delete", {"sessionId": sid})
        await watcher.call("session/close", {"sessionId": sid})
        await owner.call("session/delete", {"sessionId": sid})
        with pytest.raises(ResourceNotFound):
            await owner.prompt(sid, "gone")


async def test_a_failed_session_start_leaves_no_session_to_attach_to() -> None:
    async def refuse(session: Any) -> None:
        raise RuntimeError("no sessions today")

    agent = _agent(on_session_start=refuse)
    async with clients(agent, None) as (owner,):
        with pytest.raises(Exception, match="no sessions today"):
            await owner.new_session()
    assert not agent.history().leases.held()
    assert not runtime_for(agent).hubs

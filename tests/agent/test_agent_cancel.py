"""session/cancel on the agent runtime (PL-15..PL-20, PL-22, TR-24, D-15)."""

from __future__ import annotations

from typing import Any

import anyio
import anyio.lowlevel
import pytest
from agent_harness import agent_harness, make_agent

from acp2.agent import Turn
from acp2.errors import RequestCancelled
from acp2.schema import RequestPermissionRequest

pytestmark = pytest.mark.anyio


def _streaming_agent(log: list[str], *, tight: bool = False) -> Any:
    agent = make_agent()

    @agent.prompt
    async def handle(turn: Turn) -> str:
        call = await turn.tool_call("Long job", kind="execute")
        await call.start()
        done = await turn.tool_call("Quick job", kind="read")
        await done.complete()
        try:
            while True:
                await turn.say("tick ")
                if not tight:
                    await anyio.lowlevel.checkpoint()
        except BaseException:
            log.append(f"cancelled={turn.cancelled}")
            raise

    return agent


def _after(h: Any, index: int, session_id: str) -> list[Any]:
    return [f for f in h.frames[index + 1 :] if f.session_id == session_id]


@pytest.mark.parametrize("tight", [False, True], ids=["yielding", "tight-loop"])
async def test_pl18_cancel_mid_stream_ends_with_idle_cancelled_as_the_last_frame(
    tight: bool,
) -> None:
    log: list[str] = []
    async with agent_harness(_streaming_agent(log, tight=tight), initialize=True) as h:
        sid = await h.new_session()
        await h.prompt(sid, "go")
        await h.wait_for(lambda: len(h.updates(sid)) > 20)
        await h.cancel(sid)
        idle = await h.wait_idle(sid)
        at = h.index(lambda f: f.update is idle)
        await h.call("session/list", {})  # a round trip: anything still queued has arrived
        after = _after(h, at, sid)
    assert idle["stopReason"] == "cancelled"
    assert after == []
    assert log == ["cancelled=True"]
    errors = [f for f in h.frames if f.sender == "agent" and "error" in f.message]
    assert errors == []


async def test_pl15_unfinished_tool_calls_are_reported_cancelled_before_the_idle() -> None:
    async with agent_harness(_streaming_agent([]), initialize=True) as h:
        sid = await h.new_session()
        await h.prompt(sid, "go")
        await h.wait_for(lambda: len(h.updates(sid)) > 10)
        await h.cancel(sid)
        idle = await h.wait_idle(sid)
        updates = h.updates(sid)
    calls = [u for u in updates if u["sessionUpdate"] == "tool_call_update"]
    final: dict[str, str] = {}
    for call in calls:
        if "status" in call:
            final[call["toolCallId"]] = call["status"]
    assert sorted(final.values()) == ["cancelled", "completed"]
    last_cancel = max(i for i, u in enumerate(updates) if u.get("status") == "cancelled")
    assert last_cancel < updates.index(idle)


async def test_pl18_cancel_twice_still_sends_exactly_one_idle() -> None:
    async with agent_harness(_streaming_agent([]), initialize=True) as h:
        sid = await h.new_session()
        await h.prompt(sid, "go")
        await h.wait_for(lambda: len(h.updates(sid)) > 5)
        await h.cancel(sid)
        await h.cancel(sid)
        await h.wait_idle(sid)
        await h.cancel(sid)
        await h.call("session/list", {})
        assert [i["stopReason"] for i in h.idles(sid)] == ["cancelled"]
        await h.prompt(sid, "again")  # the next prompt is not affected by the old cancels
        await h.wait_for(lambda: len(h.updates(sid)) > len(h.updates(sid)) // 2 + 10)
        await h.call("session/list", {})
        assert len(h.idles(sid)) == 1
        await h.cancel(sid)
        idle = await h.wait_idle(sid, 2)
    assert idle["stopReason"] == "cancelled"


async def test_pl18_cancel_when_idle_is_harmless_and_sends_no_idle() -> None:
    agent = make_agent()

    @agent.prompt
    async def handle(turn: Turn) -> str:
        await turn.say("done")
        return "end_turn"

    async with agent_harness(agent, initialize=True) as h:
        sid = await h.new_session()
        await h.cancel(sid)
        await h.cancel("sess_unknown")
        await h.call("session/list", {})
        assert h.updates(sid) == []
        await h.turn(sid, "x")
        await h.cancel(sid)
        await h.call("session/list", {})
        idle = await h.turn(sid, "y")
    assert [i["stopReason"] for i in h.idles(sid)] == ["end_turn", "end_turn"]
    assert idle["stopReason"] == "end_turn"


def _permission_agent(seen: list[Any]) -> Any:
    agent = make_agent()

    @agent.prompt
    async def handle(turn: Turn) -> str:
        call = await turn.tool_call("Write file", kind="edit")
        answer = await turn.request_permission("Write it?", tool_call=call)
        seen.append(answer)  # never reached when cancelled
        await call.start()
        await call.complete()
        return "end_turn"

    return agent


async def _never_answer(request: RequestPermissionRequest) -> Any:
    await anyio.sleep_forever()


async def test_tr24_pl16_cancel_during_a_permission_wait_cancels_the_permission_request() -> None:
    seen: list[Any] = []
    async with agent_harness(_permission_agent(seen), initialize=True) as h:
        h.permission = _never_answer
        sid = await h.new_session()
        await h.prompt(sid, "go")
        await h.wait_for(lambda: h.permission_requests)
        await h.wait_for(lambda: any(u.get("state") == "requires_action" for u in h.updates(sid)))
        await h.cancel(sid)
        idle = await h.wait_idle(sid)
        await h.call("session/list", {})
    (request,) = h.requests("session/request_permission", sender="agent")
    rid = request.message["id"]
    cancel_at = h.index(
        lambda f: (
            f.sender == "agent"
            and f.method == "$/cancel_request"
            and f.message["params"]["requestId"] == rid
        )
    )
    idle_at = h.index(lambda f: f.update is idle)
    cancelled_call = h.index(
        lambda f: f.update is not None and f.update.get("status") == "cancelled"
    )
    assert 0 < cancel_at < idle_at
    assert cancelled_call < idle_at
    assert idle["stopReason"] == "cancelled"
    assert seen == []
    states = [u["state"] for u in h.updates(sid) if u["sessionUpdate"] == "state_update"]
    assert states == ["running", "requires_action", "idle"]
    assert _after(h, idle_at, sid) == []


async def test_pr10_a_client_answering_cancelled_after_cancel_request_is_ignored_quietly() -> None:
    seen: list[Any] = []

    async def answer_cancelled(request: RequestPermissionRequest) -> Any:
        if len(h.permission_requests) > 1:
            return {"outcome": {"outcome": "selected", "optionId": "allow_once"}}
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            return {"outcome": {"outcome": "cancelled"}}  # the Nov-prescribed answer

    async with agent_harness(_permission_agent(seen), initialize=True) as h:
        h.permission = answer_cancelled
        sid = await h.new_session()
        await h.prompt(sid, "go")
        await h.wait_for(lambda: h.permission_requests)
        await h.cancel(sid)
        idle = await h.wait_idle(sid)
        await h.call("session/list", {})
        next_idle = await h.turn(sid, "again")
    assert idle["stopReason"] == "cancelled"
    first = h.requests("session/request_permission", "agent")[0].message["id"]
    cancelled_answer = h.response_index(first, sender="client")
    assert h.frames[cancelled_answer].message["result"] == {"outcome": {"outcome": "cancelled"}}
    assert [answer.approved for answer in seen] == [True]  # only the second turn's answer
    assert next_idle["stopReason"] == "end_turn"


def _gated_agent(gate: anyio.Event) -> Any:
    agent = make_agent()

    @agent.prompt
    async def handle(turn: Turn) -> str:
        await turn.say(turn.text)
        await gate.wait()
        return "end_turn"

    return agent


async def test_pl18_d11_cancel_withdraws_held_prompts_with_32800() -> None:
    gate = anyio.Event()
    async with agent_harness(_gated_agent(gate), initialize=True) as h:
        sid = await h.new_session()
        await h.prompt(sid, "first")
        outcomes: list[Any] = []

        async def held(text: str) -> None:
            try:
                outcomes.append(await h.prompt(sid, text))
            except RequestCancelled as exc:
                outcomes.append(exc.code)

        async with anyio.create_task_group() as tg:
            tg.start_soon(held, "second")
            tg.start_soon(held, "third")
            await h.wait_for(lambda: len(h.requests("session/prompt")) == 3)
            await h.call("session/list", {})  # both are held by now
            await h.cancel(sid)
        idle = await h.wait_idle(sid)
        gate.set()
        after = await h.turn(sid, "fourth")  # a prompt sent after the cancel is unaffected
    assert outcomes == [-32800, -32800]
    assert idle["stopReason"] == "cancelled"
    assert after["stopReason"] == "end_turn"
    users = [
        u["content"][0]["text"] for u in h.updates(sid) if u["sessionUpdate"] == "user_message"
    ]
    assert users == ["first", "fourth"]


async def test_pl19_an_exception_raised_while_cancelling_still_ends_cancelled() -> None:
    agent = make_agent()

    @agent.prompt
    async def handle(turn: Turn) -> str:
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            raise ConnectionResetError("the model API aborted") from None
        return "end_turn"

    async with agent_harness(agent, initialize=True) as h:
        sid = await h.new_session()
        await h.prompt(sid, "go")
        await h.wait_for(lambda: any(u.get("state") == "running" for u in h.updates(sid)))
        await h.cancel(sid)
        idle = await h.wait_idle(sid)
    assert idle["stopReason"] == "cancelled"
    assert "error" not in idle
    assert not any(u["sessionUpdate"] == "agent_message" for u in h.updates(sid))


async def test_pl19_a_handler_that_shields_itself_and_returns_normally_still_ends_cancelled() -> (
    None
):
    agent = make_agent()
    release = anyio.Event()
    flags: list[bool] = []

    @agent.prompt
    async def handle(turn: Turn) -> str:
        with anyio.CancelScope(shield=True):
            await release.wait()
        flags.append(turn.cancelled)
        await turn.say("cleaned up")
        return "end_turn"

    async with agent_harness(agent, initialize=True) as h:
        sid = await h.new_session()
        await h.prompt(sid, "go")
        await h.wait_for(lambda: any(u.get("state") == "running" for u in h.updates(sid)))
        await h.cancel(sid)
        await h.call("session/list", {})  # the cancel has been handled
        release.set()
        idle = await h.wait_idle(sid)
    assert flags == [True]
    assert idle["stopReason"] == "cancelled"
    assert h.updates(sid)[-2]["sessionUpdate"] == "agent_message_chunk"

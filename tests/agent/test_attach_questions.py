"""Permission and elicitation requests of a session with several controllers: every
controller is asked, the first explicit answer wins, the others are withdrawn."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from agent_harness import Harness, allow, make_agent
from attach_harness import attach, clients

from acp2.agent import Agent, Turn
from acp2.agent.elicit import ElicitationUnsupported
from acp2.schema import CreateElicitationRequest

pytestmark = pytest.mark.anyio

IMPLICIT = {"acp2": {"implicit": True}}


def _asking(seen: list[Any]) -> Agent:
    agent = make_agent()

    @agent.prompt
    async def handle(turn: Turn) -> str:
        call = await turn.tool_call("Write file", kind="edit")
        answer = await turn.request_permission("Write it?", tool_call=call)
        seen.append(answer)
        await call.complete()
        return "end_turn"

    return agent


async def _never(request: Any) -> Any:
    await anyio.sleep_forever()


def _reject(meta: Any = None) -> Any:
    async def policy(request: Any) -> Any:
        answer: dict[str, Any] = {"outcome": {"outcome": "selected", "optionId": "reject_once"}}
        if meta is not None:
            answer["_meta"] = meta
        return answer

    return policy


def _after(harness: Harness, policy: Any) -> Any:
    """``policy``, once ``harness`` has answered its own permission request."""

    async def later(request: Any) -> Any:
        await harness.wait_for(lambda: _answers(harness))
        return await policy(request)

    return later


def _answers(harness: Harness) -> list[Any]:
    asked = {f.message["id"] for f in harness.frames if f.method == "session/request_permission"}
    return [
        f
        for f in harness.frames
        if f.sender == "client" and f.is_response and f.message.get("id") in asked
    ]


def _withdrawn(harness: Harness) -> list[Any]:
    return [
        f.message["params"]["requestId"] for f in harness.frames if f.method == "$/cancel_request"
    ]


async def test_the_first_controller_to_answer_wins_and_the_others_request_is_withdrawn() -> None:
    seen: list[Any] = []
    async with clients(_asking(seen), None, None) as (owner, helper):
        sid = await owner.new_session()
        await attach(helper, sid, "controller")
        owner.permission = _never
        helper.permission = _after_asked(owner, allow)
        await owner.prompt(sid, "go")
        idle = await owner.wait_idle(sid)
        asked = owner.requests("session/request_permission", sender="agent")
        await owner.wait_for(lambda: _withdrawn(owner))
    assert idle["stopReason"] == "end_turn"
    assert seen[0].approved
    assert _withdrawn(owner) == [asked[0].message["id"]]
    assert not _withdrawn(helper)


def _after_asked(harness: Harness, policy: Any) -> Any:
    """``policy``, once ``harness`` was asked too (so there is something to withdraw)."""

    async def later(request: Any) -> Any:
        await harness.wait_for(lambda: harness.permission_requests)
        return await policy(request)

    return later


async def test_an_implicit_answer_loses_to_a_later_explicit_one() -> None:
    seen: list[Any] = []
    async with clients(_asking(seen), None, None) as (owner, helper):
        sid = await owner.new_session()
        await attach(helper, sid, "controller")
        owner.permission = _reject(IMPLICIT)  # a deny-all policy: nobody was asked
        helper.permission = _after(owner, allow)
        await owner.prompt(sid, "go")
        await owner.wait_idle(sid)
    assert seen[0].approved
    assert not _withdrawn(owner)
    assert not _withdrawn(helper)


async def test_when_every_answer_is_implicit_the_first_one_counts() -> None:
    seen: list[Any] = []
    async with clients(_asking(seen), None, None) as (owner, helper):
        sid = await owner.new_session()
        await attach(helper, sid, "controller")
        owner.permission = _reject(IMPLICIT)
        helper.permission = _after(owner, _reject(IMPLICIT))
        await owner.prompt(sid, "go")
        await owner.wait_idle(sid)
    assert seen[0].outcome == "selected"
    assert not seen[0].approved


async def test_observers_are_never_asked() -> None:
    seen: list[Any] = []
    async with clients(_asking(seen), None, None) as (owner, watcher):
        sid = await owner.new_session()
        await attach(watcher, sid)
        await owner.turn(sid, "go")
    assert seen[0].approved
    assert not watcher.permission_requests


async def test_a_controller_that_attaches_while_a_request_is_open_is_asked_too() -> None:
    seen: list[Any] = []
    async with clients(_asking(seen), None, None) as (owner, late):
        sid = await owner.new_session()
        owner.permission = _never
        await owner.prompt(sid, "go")
        await owner.wait_for(lambda: owner.permission_requests)
        await attach(late, sid, "controller")
        await owner.wait_idle(sid)
        await owner.wait_for(lambda: _withdrawn(owner))
    assert seen[0].approved
    assert len(late.permission_requests) == 1


async def test_with_only_observers_left_a_permission_request_is_cancelled() -> None:
    seen: list[Any] = []
    async with clients(_asking(seen), None, None) as (owner, watcher):
        sid = await owner.new_session()
        await attach(watcher, sid)
        owner.permission = _never
        await owner.prompt(sid, "go")
        await owner.wait_for(lambda: owner.permission_requests)
        await owner.connection.aclose()
        idle = await watcher.wait_for(lambda: watcher.idles(sid)[1:])
    assert seen[0].outcome == "cancelled"
    assert idle[0]["stopReason"] == "end_turn"


def _eliciting(seen: list[Any]) -> Agent:
    agent = make_agent()
    schema = {"type": "object", "properties": {"name": {"type": "string"}}}

    @agent.prompt
    async def handle(turn: Turn) -> str:
        try:
            seen.append(await turn.elicit("Who?", schema=schema))
        except ElicitationUnsupported as exc:
            seen.append(exc)
        return "end_turn"

    return agent


async def test_an_elicitation_goes_only_to_controllers_that_advertised_its_mode() -> None:
    seen: list[Any] = []
    asked: list[str] = []

    def answering(who: str) -> Any:
        async def answer(params: Any) -> Any:
            asked.append(who)
            return {"action": "accept", "content": {"name": who}}

        return answer

    form = {"elicitation": {"form": {}}}
    async with clients(_eliciting(seen), None, None) as (owner, helper):
        for harness, who in ((owner, "owner"), (helper, "helper")):
            harness.connection.on_request(
                "elicitation/create",
                CreateElicitationRequest,
                answering(who),  # type: ignore[arg-type]
            )
        await helper.initialize(capabilities=form)
        sid = await owner.new_session()
        await attach(helper, sid, "controller")
        await owner.turn(sid, "who")
    assert asked == ["helper"]
    assert seen[0].content == {"name": "helper"}

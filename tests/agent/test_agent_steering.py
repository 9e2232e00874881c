"""``_acp2/session/steer`` on the agent runtime: kept for the running work and shown as a
``user_message``; ``idle`` when nothing runs; neither advertised nor served unless
``Agent.steer`` is set."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from agent_harness import agent_harness, make_agent

from acp2.agent import Turn
from acp2.agent.steering import take_steering
from acp2.errors import MethodNotFound, ResourceNotFound

pytestmark = pytest.mark.anyio

STEER = "_acp2/session/steer"


def _text(text: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": text}]


def _waiting_agent(release: anyio.Event, got: list[Any], **config: Any) -> Any:
    agent = make_agent(**config)

    @agent.prompt
    async def handle(turn: Turn) -> str:
        await release.wait()
        got.extend(take_steering(turn.session))
        return "end_turn"

    return agent


async def test_steering_reaches_the_running_work_and_every_client_sees_it() -> None:
    release, got = anyio.Event(), []
    agent = _waiting_agent(release, got, steer=True)
    async with agent_harness(agent, initialize=True, validate="agent") as h:
        sid = await h.new_session()
        await h.prompt(sid, "start")
        await h.wait_for(lambda: any(u.get("state") == "running" for u in h.updates(sid)))
        answer = await h.call(STEER, {"sessionId": sid, "prompt": _text("use tabs")})
        release.set()
        await h.wait_idle(sid)
        users = [u for u in h.updates(sid) if u["sessionUpdate"] == "user_message"]
    assert answer["outcome"] == "steered"
    assert users[-1]["messageId"] == answer["messageId"]
    assert users[-1]["content"] == _text("use tabs")
    assert [[b.text for b in blocks] for blocks in got] == [["use tabs"]]


async def test_steering_an_idle_session_keeps_nothing_and_says_idle() -> None:
    release, got = anyio.Event(), []
    release.set()
    async with agent_harness(_waiting_agent(release, got, steer=True), initialize=True) as h:
        sid = await h.new_session()
        answer = await h.call(STEER, {"sessionId": sid, "prompt": _text("hello")})
        await h.turn(sid, "go")
    assert answer == {"outcome": "idle"}
    assert got == []


async def test_steering_an_unknown_session_is_32002() -> None:
    release = anyio.Event()
    async with agent_harness(_waiting_agent(release, [], steer=True), initialize=True) as h:
        with pytest.raises(ResourceNotFound):
            await h.call(STEER, {"sessionId": "sess_nope", "prompt": _text("x")})


async def test_without_the_setting_steering_is_neither_advertised_nor_served() -> None:
    async with agent_harness(make_agent(), validate="agent") as h:
        session = (await h.initialize())["capabilities"]["session"]
        sid = await h.new_session()
        with pytest.raises(MethodNotFound):
            await h.call(STEER, {"sessionId": sid, "prompt": _text("x")})
    assert "steer" not in session.get("_meta", {}).get("acp2", {})

"""Child sessions of a session several clients share (issue 28): the child's own
``session/update``s, under the child's id, reach every client attached to its parent --
also one that attaches while the child works (history in the replay, live after it,
each update once) -- and stop for a client that detached; the child's permission
requests go to every controller of the parent, the first answer wins."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from agent_harness import Harness, allow, make_agent
from attach_harness import attach, clients

from acp2.agent import Agent, Turn

pytestmark = pytest.mark.anyio


def _child_id(harness: Harness, parent: str) -> str:
    """The id of the first child announced on ``parent``."""
    found = _announced(harness, parent)
    assert found is not None, "no child announced"
    return found


def _announced(harness: Harness, parent: str) -> str | None:
    """The id of the first child announced on ``parent``, or None."""
    for update in harness.updates(parent):
        if update.get("sessionUpdate") == "subagent_update":
            return str(update["sessionId"])
    return None


def _said(harness: Harness, session_id: str) -> list[str]:
    """The agent message texts ``harness`` got under ``session_id``, in order: the
    streamed chunks, and the whole messages of a replay."""
    said: list[str] = []
    for update in harness.updates(session_id):
        if update.get("sessionUpdate") == "agent_message_chunk":
            said.append(update["content"]["text"])
        elif update.get("sessionUpdate") == "agent_message":
            said.extend(block["text"] for block in update["content"])
    return said


def _delegating(gate: anyio.Event | None = None, asks: bool = False) -> Agent:
    """A prompt delegates to a child that says ``before``, waits for ``gate`` (when
    given), asks a permission (``asks``) and says ``after``."""
    agent = make_agent()

    @agent.prompt
    async def handle(turn: Turn) -> str:
        async def body(sub: Turn, task: str) -> str:
            await sub.say("before")
            if gate is not None:
                await gate.wait()
            if asks:
                answer = await sub.request_permission("Write it?")
                await sub.say(f"approved={answer.approved}")
            await sub.say("after")
            return "done"

        await turn.delegate("look around", body, title="Researcher")
        return "end_turn"

    return agent


async def test_a_second_client_of_the_parent_gets_the_childs_own_live_updates() -> None:
    async with clients(_delegating(), None, None) as (owner, helper):
        sid = await owner.new_session()
        await attach(helper, sid, "observer")
        await owner.turn(sid, "go")
        child = _child_id(owner, sid)
        await helper.wait_idle(sid)
        await helper.wait_for(lambda: "after" in _said(helper, child))
    assert _said(helper, child) == ["before", "after"]
    assert _said(owner, child) == ["before", "after"]


async def test_a_client_attaching_while_the_child_works_gets_its_history_then_live_once() -> None:
    gate = anyio.Event()
    async with clients(_delegating(gate), None, None) as (owner, helper):
        sid = await owner.new_session()
        await owner.prompt(sid, "go")
        await owner.wait_for(lambda: _said(owner, _announced(owner, sid) or sid))
        child = _child_id(owner, sid)
        await attach(helper, sid, "observer")
        gate.set()
        await owner.wait_idle(sid)
        await helper.wait_idle(sid)
        await helper.wait_for(lambda: "after" in _said(helper, child))
    assert _said(helper, child) == ["before", "after"]
    replayed = helper.index(
        lambda f: (
            f.session_id == child and (f.update or {}).get("sessionUpdate") == "replay_complete"
        )
    )
    live = helper.index(lambda f: f.session_id == child and "after" in str(f.update))
    assert replayed < live < len(helper.frames)


async def test_a_client_that_closed_the_parent_gets_none_of_the_childs_updates() -> None:
    async with clients(_delegating(), None, None) as (owner, helper):
        sid = await owner.new_session()
        await attach(helper, sid, "observer")
        await helper.call("session/close", {"sessionId": sid})
        await owner.turn(sid, "go")
        child = _child_id(owner, sid)
        await owner.wait_for(lambda: "after" in _said(owner, child))
    assert not helper.updates(child)


async def test_a_childs_permission_request_goes_to_every_controller_of_the_parent() -> None:
    async with clients(_delegating(asks=True), None, None) as (owner, helper):
        sid = await owner.new_session()
        await attach(helper, sid, "controller")
        owner.permission = _never
        helper.permission = allow
        await owner.prompt(sid, "go")
        await owner.wait_idle(sid)
        child = _child_id(owner, sid)
        await owner.wait_for(lambda: _withdrawn(owner))
    assert "approved=True" in _said(owner, child)
    asked = [f.session_id for f in helper.frames if f.method == "session/request_permission"]
    assert asked == [child]


async def _never(request: Any) -> Any:
    await anyio.sleep_forever()


def _withdrawn(harness: Harness) -> list[Any]:
    return [f for f in harness.frames if f.method == "$/cancel_request"]

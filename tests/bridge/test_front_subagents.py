"""An acp2 agent with subagents behind the front bridge, served to a v1 client
(``protocol/v1/subagents``): a client that opts in with ``clientCapabilities.subagents``
gets the announcement and the child's own updates under the child's id, and may cancel a
cancellable child; a client that does not sees none of the child's ids, the child's text
folded into the parent's tool call that names the child. Against the test agent's
``subagent`` scenario, in process."""

from __future__ import annotations

import json
from contextlib import asynccontextmanager
from typing import Any

import pytest
from wire import ZED_INITIALIZE, Wire

from acp2.agent import Agent, HistoryStore, Turn
from acp2.testing.scenarios import build_test_agent
from helpers.inprocess import serving
from interop.v1_schema import validate_v1_frame

pytestmark = pytest.mark.anyio

OPTED_IN = {
    **ZED_INITIALIZE,
    "clientCapabilities": {**ZED_INITIALIZE["clientCapabilities"], "subagents": {}},
}
#: The v1 subagent updates: unstable, not in the vendored v1 schema.
CHILD_KINDS = {"subagent_update", "session_message", "session_message_chunk"}


@asynccontextmanager
async def v1_client(initialize: dict[str, Any]) -> Any:
    async with serving(build_test_agent(), wait=True) as agents:
        wire = Wire(agents.open())
        await wire.request("initialize", initialize)
        yield wire


async def new_session(wire: Wire) -> str:
    new = await wire.request("session/new", {"cwd": "/tmp", "mcpServers": []})
    session_id: str = new["result"]["sessionId"]
    return session_id


def prompt(sid: str, text: str) -> dict[str, Any]:
    return {"sessionId": sid, "prompt": [{"type": "text", "text": text}]}


def sessions_of(wire: Wire) -> set[str]:
    return {f["params"]["sessionId"] for f in wire.frames if f.get("method") == "session/update"}


def said(frame: dict[str, Any]) -> str | None:
    """The text of an agent message chunk frame (None for any other frame)."""
    update = frame.get("params", {}).get("update", {}) if "method" in frame else {}
    if update.get("sessionUpdate") != "agent_message_chunk":
        return None
    text: str = update["content"].get("text", "")
    return text


def problems(wire: Wire) -> list[str]:
    """v1 schema problems of every frame but the v1 subagent updates."""
    found = []
    for frame in wire.frames:
        update = frame.get("params", {}).get("update", {})
        if isinstance(update, dict) and update.get("sessionUpdate") in CHILD_KINDS:
            continue
        found += validate_v1_frame(frame, "agent", dict(wire.asked))
    return found


async def test_without_the_opt_in_the_childs_text_is_folded_into_the_parents_tool_call() -> None:
    async with v1_client(ZED_INITIALIZE) as wire:
        sid = await new_session(wire)
        answered = await wire.request("session/prompt", prompt(sid, "subagent found three pages"))
    assert answered["result"] == {"stopReason": "end_turn"}
    assert sessions_of(wire) == {sid}  # no child id ever reaches the client
    assert not {u["sessionUpdate"] for u in wire.updates()} & CHILD_KINDS
    calls = [u for u in wire.updates() if u["sessionUpdate"] in ("tool_call", "tool_call_update")]
    texts = [
        block["content"]["text"]
        for call in calls
        for block in call.get("content") or []
        if block.get("type") == "content"
    ]
    assert "found three pages" in texts
    assert problems(wire) == []


async def test_with_the_opt_in_the_child_is_announced_and_its_updates_pass_under_its_id() -> None:
    async with v1_client(OPTED_IN) as wire:
        sid = await new_session(wire)
        answered = await wire.request("session/prompt", prompt(sid, "subagent found three pages"))
    assert answered["result"] == {"stopReason": "end_turn"}
    announced = [u for u in wire.updates("subagent_update") if "title" in u]
    (child,) = {u["sessionId"] for u in announced}
    assert announced[0]["title"] == "helper"
    of_child = [
        f["params"]["update"]
        for f in wire.frames
        if f.get("method") == "session/update" and f["params"]["sessionId"] == child
    ]
    texts = [u["content"]["text"] for u in of_child if u["sessionUpdate"] == "agent_message_chunk"]
    assert texts == ["found three pages"]
    assert problems(wire) == []


async def test_an_opted_in_v1_client_cancels_a_cancellable_child_and_the_parent_goes_on() -> None:
    async with v1_client(OPTED_IN) as wire:
        sid = await new_session(wire)
        asked = {"id": "p", "method": "session/prompt", "params": prompt(sid, "subagent wait")}
        await wire.send(asked)
        waiting = await wire.until(lambda f: said(f) == "helper waiting")
        child = waiting["params"]["sessionId"]
        assert child != sid
        await wire.send({"method": "session/cancel", "params": {"sessionId": child}})
        answered = await wire.answer("p")
    assert answered["result"] == {"stopReason": "end_turn"}
    texts = [u["content"]["text"] for u in wire.updates("agent_message_chunk")]
    assert texts[-1] == "helper cancelled"


def asking_agent() -> Any:
    """A parent that delegates to a child which asks permission, then reports the answer."""
    agent = Agent("asking", store=HistoryStore(":memory:"))

    @agent.prompt
    async def handle(turn: Turn) -> str:
        call = await turn.tool_call("Delegate", name="task")

        async def ask(sub: Turn, task: str) -> str:
            result = await sub.request_permission("Delete the cache?")
            return "approved" if result.approved else "refused"

        result = await turn.delegate("ask", ask, title="asker", tool_call=call)
        await turn.say(f"child {result.report}")
        return "end_turn"

    return agent


async def test_without_the_opt_in_a_childs_permission_request_is_asked_in_its_parent() -> None:
    async with serving(asking_agent(), wait=True) as agents:
        wire = Wire(agents.open())
        await wire.request("initialize", ZED_INITIALIZE)
        sid = await new_session(wire)
        await wire.send({"id": "p", "method": "session/prompt", "params": prompt(sid, "go")})
        asked = await wire.until(lambda f: f.get("method") == "session/request_permission")
        assert asked["params"]["sessionId"] == sid  # the only session the client knows
        option = next(o for o in asked["params"]["options"] if o["kind"] == "allow_once")
        outcome = {"outcome": "selected", "optionId": option["optionId"]}
        answer = {"jsonrpc": "2.0", "id": asked["id"], "result": {"outcome": outcome}}
        await wire.transport.send(json.dumps(answer).encode() + b"\n")
        answered = await wire.answer("p")
    assert answered["result"] == {"stopReason": "end_turn"}
    assert sessions_of(wire) == {sid}
    texts = [u["content"]["text"] for u in wire.updates("agent_message_chunk")]
    assert texts[-1] == "child approved"

"""The in-process front bridge takes the agent's updates as objects, and keeps every rule.

``serve_v1_client`` (an acp2 agent in this process serving a v1 client) has the agent's
emitter hand each update to :meth:`acp2.bridge.front.FrontBridge.take` as the object it
emitted: plain text chunks go to the v1 client as the bytes the emitter encoded,
everything else through the projection, in the order the agent sent them, and nothing
is decoded again. Most tests drive a real agent over a memory pair and check the v1
frames it gets.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from wire import ZED_INITIALIZE, Wire

import acp2.schema as v2
import acp2.schema.methods as v2m
from acp2.agent import Agent, Turn
from acp2.agent.emitter import Emitter
from acp2.bridge.inprocess import inprocess_pair
from acp2.rpc import Connection
from acp2.rpc.messages import encode_notification
from acp2.transport.memory import memory_pair
from helpers.inprocess import serving
from interop.v1_schema import validate_v1_frame

pytestmark = pytest.mark.anyio

#: Enough chunks to pass 256 KiB of output (the v1 side drains, the agent writes on).
MANY = 5000


def streaming_agent() -> Agent:
    """An agent whose prompt text names what its turn sends (see each test)."""
    agent = Agent("front-in-process-test-agent", version="0", store=":memory:")

    @agent.prompt
    async def turn(turn: Turn) -> str:
        if turn.text.startswith("echo "):
            await turn.say(turn.text[5:])
            return "end_turn"
        if turn.text == "ask":
            await ask_to_edit(turn)
            return "end_turn"
        mixed = turn.text == "mixed"
        for i in range(MANY):
            await turn.say(f"tok{i} ")
            if mixed and i % 1000 == 500:
                await say_annotated(turn, i)
                await turn.think(f"thought{i}")
        if turn.text == "big":
            await turn.say("x" * (3 * 1024 * 1024))  # written in pieces: split lines
            await turn.say("after")
        if turn.text == "whole":
            message_id = await turn.say("whole")
            whole = [v2.TextContent(text="whole")]
            await turn.send(v2.AgentMessage(message_id=message_id, content=whole))
        return "end_turn"

    return agent


EDIT_PATCH = "diff --git /tmp/a.py /tmp/a.py\n--- /tmp/a.py\n+++ /tmp/a.py\n@@ -1 +1 @@\n-x\n+y\n"


async def ask_to_edit(turn: Turn) -> None:
    """Announce an edit with its diff, then ask about it by the call's id (acp2's way)."""
    change = v2.DiffModifyChange(path="/tmp/a.py", file_type="text")
    patch = v2.DiffPatch(format="git_patch", text=EDIT_PATCH)
    diff = v2.Diff(changes=[change], patch=patch)
    locations = [v2.ToolCallLocation(path="/tmp/a.py", line=1)]
    call = await turn.tool_call("Edit a.py", kind="edit", content=diff, locations=locations)
    await turn.request_permission("Apply the edit?", tool_call=call)
    await call.complete()


async def say_annotated(turn: Turn, i: int) -> None:
    text = v2.TextContent(text=f"note{i}", annotations=v2.Annotations(priority=0.5))
    await turn.send(v2.AgentMessageChunk(message_id=f"note_{i}", content=text))


@asynccontextmanager
async def v1_client() -> AsyncIterator[tuple[Wire, str]]:
    """A v1 client (Wire) with one session, served through ``Agent.serve``."""
    async with serving(streaming_agent(), wait=True) as agents:
        wire = Wire(agents.open())
        await wire.request("initialize", ZED_INITIALIZE)
        new = await wire.request("session/new", {"cwd": "/tmp", "mcpServers": []})
        yield wire, new["result"]["sessionId"]


async def prompt(wire: Wire, sid: str, text: str) -> dict[str, Any]:
    wire.frames.clear()
    params = {"sessionId": sid, "prompt": [{"type": "text", "text": text}]}
    return await wire.request("session/prompt", params)


def problems(wire: Wire) -> list[str]:
    found: list[str] = []
    for frame in wire.frames[:50] + wire.frames[-50:]:
        found += validate_v1_frame(frame, "agent", dict(wire.asked))
    return found


async def test_a_long_stream_arrives_whole_in_order_and_before_the_prompts_answer() -> None:
    async with v1_client() as (wire, sid):
        answer = await prompt(wire, sid, "plain")

    assert answer["result"] == {"stopReason": "end_turn"}
    assert wire.frames[-1] is answer
    chunks = wire.updates("agent_message_chunk")
    assert [c["content"]["text"] for c in chunks] == [f"tok{i} " for i in range(MANY)]
    assert {c["messageId"] for c in chunks} == {chunks[0]["messageId"]}
    assert problems(wire) == []


async def test_updates_v1_says_differently_are_projected_in_their_place() -> None:
    async with v1_client() as (wire, sid):
        await prompt(wire, sid, "mixed")

    kinds = [
        (u["sessionUpdate"], u["content"]["text"])
        for u in wire.updates()
        if u["sessionUpdate"] in ("agent_message_chunk", "agent_thought_chunk")
    ]
    at = kinds.index(("agent_message_chunk", "note500"))
    assert kinds[at - 1 : at + 3] == [
        ("agent_message_chunk", "tok500 "),
        ("agent_message_chunk", "note500"),
        ("agent_thought_chunk", "thought500"),
        ("agent_message_chunk", "tok501 "),
    ]
    annotated = wire.updates()[
        [u.get("content", {}).get("text") for u in wire.updates()].index("note500")
    ]
    assert annotated["content"]["annotations"] == {"priority": 0.5}
    assert problems(wire) == []


async def test_a_frame_split_across_writes_still_arrives_and_the_stream_goes_on() -> None:
    async with v1_client() as (wire, sid):
        answer = await prompt(wire, sid, "big")

    assert answer["result"] == {"stopReason": "end_turn"}
    texts = [c["content"]["text"] for c in wire.updates("agent_message_chunk")]
    assert texts[-2:] == ["x" * (3 * 1024 * 1024), "after"]
    assert len(texts) == MANY + 2


async def test_a_whole_message_after_its_passed_chunks_is_not_sent_again() -> None:
    async with v1_client() as (wire, sid):
        await prompt(wire, sid, "whole")

    texts = [c["content"]["text"] for c in wire.updates("agent_message_chunk")]
    assert texts[-1] == "whole"
    assert texts.count("whole") == 1


@pytest.mark.parametrize("text", ["plain", 'a "quoted" word', "ends with \\", "line\nbreak"])
async def test_a_chunks_text_with_escapes_reaches_the_v1_client_as_written(text: str) -> None:
    async with v1_client() as (wire, sid):
        answer = await prompt(wire, sid, f"echo {text}")

    assert answer["result"] == {"stopReason": "end_turn"}
    assert [c["content"]["text"] for c in wire.updates("agent_message_chunk")] == [text]
    assert problems(wire) == []


async def test_the_emitter_hands_an_in_process_taker_the_object_and_its_frame() -> None:
    chunk = v2.AgentMessageChunk(message_id="m1", content=v2.TextContent(text="hi"))
    taken: list[tuple[str, Any, bytes]] = []
    framed: list[Any] = []
    _editor, v1_end = memory_pair()
    async with Connection(v1_end, name="v1") as flow:
        agent_end, bridge_end = inprocess_pair(flow)
        bridge_end.on(v2m.SESSION_UPDATE, framed.append)
        emitter = Emitter("s1", agent_end, None)
        emitter.emit(chunk)  # a plain end: decoded from the frame
        agent_end.send_updates_through(lambda *item: taken.append(item))
        emitter.retarget(agent_end)  # the emitter looks for the taker when pointed at a sink
        emitter.emit(chunk)
    assert [p.update for p in framed] == [chunk]
    [(session_id, update, frame)] = taken
    assert (session_id, update) == ("s1", chunk)
    assert update is chunk  # the object itself: nothing encoded and decoded in between
    assert frame == encode_notification("session/update", {"sessionId": "s1", "update": chunk})


async def test_a_v1_clients_permission_request_shows_the_diff_of_the_call_it_names() -> None:
    async with v1_client() as (wire, sid):
        wire.frames.clear()
        params = {"sessionId": sid, "prompt": [{"type": "text", "text": "ask"}]}
        await wire.send({"id": "p", "method": "session/prompt", "params": params})
        asked = await wire.until(lambda m: m.get("method") == "session/request_permission")
        option = asked["params"]["options"][0]["optionId"]
        outcome = {"outcome": "selected", "optionId": option}
        reply = {"jsonrpc": "2.0", "id": asked["id"], "result": {"outcome": outcome}}
        await wire.transport.send(json.dumps(reply).encode() + b"\n")
        answer = await wire.answer("p")

    assert answer["result"] == {"stopReason": "end_turn"}
    call = asked["params"]["toolCall"]
    (shown,) = call["content"]
    assert shown["type"] == "diff"  # v1's native diff, before the question
    assert (shown["path"], shown["oldText"], shown["newText"]) == ("/tmp/a.py", "x\n", "y\n")
    (announced,) = wire.updates("tool_call")
    assert announced["locations"] == [{"path": "/tmp/a.py", "line": 1}]
    assert problems(wire) == []

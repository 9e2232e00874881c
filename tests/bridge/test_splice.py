"""The in-process front bridge passes plain text chunks as bytes, and keeps every rule.

``serve_v1_client`` (an acp2 agent in this process serving a v1 client) runs the agent's
output through :class:`acp2.bridge.splice.Splice`: plain text chunks go to the v1 client
as they are, everything else through the projection, in the order the agent sent them.
Each test drives a real agent over a memory pair and checks the v1 frames it gets.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from wire import ZED_INITIALIZE, Wire

import acp2.schema as v2
from acp2.agent import Agent, Turn
from acp2.bridge.splice import Splice
from acp2.bridge.turns import BridgeSession
from acp2.rpc import Connection
from acp2.rpc.messages import encode_notification
from acp2.transport.memory import memory_pair
from helpers.inprocess import serving
from helpers.timeouts import TIMEOUT
from interop.v1_schema import validate_v1_frame

pytestmark = pytest.mark.anyio

#: Enough chunks to pass 256 KiB of output (the v1 side drains, the agent writes on).
MANY = 5000


def streaming_agent() -> Agent:
    """An agent whose prompt text names what its turn sends (see each test)."""
    agent = Agent("splice-test-agent", version="0", store=":memory:")

    @agent.prompt
    async def turn(turn: Turn) -> str:
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


def update_frame(session_id: str, update: Any) -> bytes:
    return encode_notification("session/update", {"sessionId": session_id, "update": update})


async def test_the_splice_passes_plain_chunks_of_open_sessions_and_refuses_the_rest() -> None:
    plain = v2.AgentMessageChunk(message_id="m", content=v2.TextContent(text="hi"))
    noted = v2.AgentMessageChunk(message_id="m", content=v2.TextContent(text="x", meta={}))
    frames = [
        update_frame("s1", plain),
        update_frame("s1", noted),  # _meta: v1 is told it by the projection
        update_frame("s2", plain),  # a session the bridge has not opened
        update_frame("s3", plain),  # opened, but its session/new answer is not out yet
        b'{"jsonrpc":"2.0","method":"_x","params":{}}',
        update_frame("s1", plain),  # the same start as the first: the quick check
    ]
    editor, v1_end = memory_pair()
    opened, held = (
        BridgeSession("s1", boolean_options=False),
        BridgeSession("s3", boolean_options=False),
    )
    held.backlog = []
    async with Connection(v1_end, name="v1") as v1:
        splice = Splice(v1, {opened.wire_id: opened, held.wire_id: held})
        taken = [splice(frame) for frame in frames]
        passed = Wire(editor)
        with anyio.fail_after(TIMEOUT):
            first, second = await passed._read(), await passed._read()

    assert taken == [True, False, False, False, False, True]
    assert first["params"]["update"]["content"] == {"type": "text", "text": "hi"}
    assert second == first


async def test_a_chunk_of_another_message_is_noted_before_it_passes() -> None:
    first = v2.AgentMessageChunk(message_id="a1", content=v2.TextContent(text="one"))
    thought = v2.AgentThoughtChunk(message_id="t1", content=v2.TextContent(text="two"))
    _editor, v1_end = memory_pair()
    session = BridgeSession("s1", boolean_options=False)
    async with Connection(v1_end, name="v1") as v1:
        splice = Splice(v1, {session.wire_id: session})
        assert splice(update_frame("s1", first))
        assert splice(update_frame("s1", thought))
        whole = v2.AgentMessage(message_id="a1", content=[v2.TextContent(text="one")])
        notes = session.projector.project(
            v2.UpdateSessionNotification(session_id="s1", update=whole)
        )

    assert notes == []  # its chunks passed: the whole message is not said again


@pytest.mark.parametrize("text", ["plain", 'a "quoted" word', "ends with \\", ""])
async def test_a_chunks_text_with_escapes_still_passes(text: str) -> None:
    chunk = v2.AgentMessageChunk(message_id="m", content=v2.TextContent(text=text))
    _editor, v1_end = memory_pair()
    session = BridgeSession("s1", boolean_options=False)
    async with Connection(v1_end, name="v1") as v1:
        splice = Splice(v1, {session.wire_id: session})
        assert splice(update_frame("s1", chunk))
        assert splice(update_frame("s1", chunk))  # the quick check: the same verdict


async def test_anything_after_the_text_sends_the_chunk_through_the_projection() -> None:
    plain = v2.AgentMessageChunk(message_id="m", content=v2.TextContent(text="x"))
    noted = v2.AgentMessageChunk(message_id="m", content=v2.TextContent(text="x"), meta={"k": "v"})
    annotated = v2.AgentMessageChunk(
        message_id="m", content=v2.TextContent(text="x", annotations=v2.Annotations(priority=1))
    )
    _editor, v1_end = memory_pair()
    session = BridgeSession("s1", boolean_options=False)
    async with Connection(v1_end, name="v1") as v1:
        splice = Splice(v1, {session.wire_id: session})
        assert splice(update_frame("s1", plain))
        assert not splice(update_frame("s1", noted))
        assert not splice(update_frame("s1", annotated))


async def test_the_turns_bookkeeping_updates_are_decoded_from_their_bytes_and_projected() -> None:
    running = v2.StateUpdate(state="running")
    idle = v2.StateUpdate(state="idle", stop_reason="end_turn")
    user = v2.UserMessage(message_id="u1", content=[v2.TextContent(text="hi")])
    _editor, v1_end = memory_pair()
    opened, held = (
        BridgeSession("s1", boolean_options=False),
        BridgeSession("s3", boolean_options=False),
    )
    held.backlog = []
    projected: list[tuple[Any, Any]] = []
    async with Connection(v1_end, name="v1") as v1:
        splice = Splice(
            v1,
            {opened.wire_id: opened, held.wire_id: held},
            project=lambda session, update: projected.append((session, update)),
        )
        taken = [
            splice(update_frame("s1", user)),
            splice(update_frame("s1", running)),
            splice(update_frame("s1", idle)),
            splice(update_frame("s3", idle)),  # held back: the full path keeps it
            splice(
                encode_notification(
                    "session/update", {"sessionId": "s1", "update": idle, "_meta": {}}
                )
            ),
        ]

    assert taken == [True, True, True, False, False]
    assert projected == [(opened, user), (opened, running), (opened, idle)]


async def test_without_a_projection_the_splice_leaves_bookkeeping_updates_alone() -> None:
    _editor, v1_end = memory_pair()
    session = BridgeSession("s1", boolean_options=False)
    async with Connection(v1_end, name="v1") as v1:
        splice = Splice(v1, {session.wire_id: session})
        assert not splice(update_frame("s1", v2.StateUpdate(state="running")))


async def test_as_the_agents_sink_the_splice_hands_what_it_does_not_take_on() -> None:
    plain = v2.AgentMessageChunk(message_id="m", content=v2.TextContent(text="hi"))
    quoted = v2.AgentMessageChunk(message_id="m", content=v2.TextContent(text='say "hi"'))
    plan = v2.PlanUpdate(plan=v2.PlanItems(plan_id="p", entries=[]))
    editor, v1_end = memory_pair()
    session = BridgeSession("s1", boolean_options=False)
    handed: list[bytes] = []
    async with Connection(v1_end, name="v1") as v1:
        splice = Splice(v1, {session.wire_id: session}, fallback=handed.append)
        for update in (plain, plain, quoted, plan):
            splice.send(update_frame("s1", update))
        wire = Wire(editor)
        with anyio.fail_after(TIMEOUT):
            passed = [await wire._read() for _ in range(3)]

    texts = [frame["params"]["update"]["content"]["text"] for frame in passed]
    assert texts == ["hi", "hi", 'say "hi"']
    assert handed == [update_frame("s1", plan)]


async def test_the_sinks_quick_check_hands_on_every_frame_with_more_after_its_text() -> None:
    first = v2.AgentMessageChunk(message_id="m", content=v2.TextContent(text="go"))
    passing = [
        v2.AgentMessageChunk(message_id="m", content=v2.TextContent(text=text))
        for text in ("plain", "", "a\nb", "ends with \\")
    ]
    noted = v2.AgentMessageChunk(message_id="m", content=v2.TextContent(text="x"), meta={"k": "v"})
    annotated = v2.AgentMessageChunk(
        message_id="m", content=v2.TextContent(text="x", annotations=v2.Annotations(priority=1))
    )
    editor, v1_end = memory_pair()
    session = BridgeSession("s1", boolean_options=False)
    handed: list[bytes] = []
    async with Connection(v1_end, name="v1") as v1:
        splice = Splice(v1, {session.wire_id: session}, fallback=handed.append)
        splice.send(update_frame("s1", first))  # sets the prefix the quick check compares
        for update in (*passing, noted, annotated):
            splice.send(update_frame("s1", update))
        wire = Wire(editor)
        with anyio.fail_after(TIMEOUT):
            passed = [await wire._read() for _ in range(1 + len(passing))]

    texts = [frame["params"]["update"]["content"]["text"] for frame in passed]
    assert texts == ["go", "plain", "", "a\nb", "ends with \\"]
    assert handed == [update_frame("s1", noted), update_frame("s1", annotated)]

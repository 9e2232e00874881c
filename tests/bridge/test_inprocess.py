"""The in-process link between the front bridge and the agent runtime (``inprocess_pair``).

Each test joins two ends over a real v1-side ``Connection`` (the flow every frame ends
on) and checks what a caller on one end sees of the other end's handlers.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Awaitable
from contextlib import asynccontextmanager
from functools import partial

import anyio
import anyio.lowlevel
import back_ways
import msgspec
import pytest
from msgspec import Raw
from wire import ZED_INITIALIZE, Wire

import acp2.compat.v1.methods as v1m
import acp2.compat.v1.schema as v1
import acp2.rpc.messages as rpc_messages
import acp2.schema as v2
import acp2.schema.methods as v2m
from acp2.agent import Agent, Turn
from acp2.bridge.inprocess import InProcessEnd, inprocess_pair
from acp2.errors import ConnectionClosed, InternalError, InvalidParams, MethodNotFound
from acp2.rpc import Connection
from acp2.rpc.messages import encode_notification
from acp2.schema.codec import encode
from acp2.transport.memory import memory_pair
from helpers.inprocess import serving
from helpers.timeouts import TIMEOUT

pytestmark = pytest.mark.anyio

CLOSE = v2m.SESSION_CLOSE
REQUEST = v2.CloseSessionRequest(session_id="s1")


@asynccontextmanager
async def pair() -> AsyncIterator[tuple[InProcessEnd, InProcessEnd, Connection]]:
    _peer, ours = memory_pair()
    async with Connection(ours, name="v1") as flow:
        agent, bridge = inprocess_pair(flow)
        yield agent, bridge, flow


async def test_a_call_returns_the_other_ends_result_object_itself() -> None:
    answer = v2.CloseSessionResponse()
    seen: list[object] = []

    async def close(params: v2.CloseSessionRequest) -> v2.CloseSessionResponse:
        seen.append(params)
        return answer

    async with pair() as (agent, bridge, _flow):
        agent.on(CLOSE, close)
        assert await bridge.call(CLOSE, REQUEST) is answer
    assert seen == [REQUEST]


async def test_a_request_error_reaches_the_caller_as_raised_and_a_bug_as_internal_error() -> None:
    async def refuse(params: v2.CloseSessionRequest) -> v2.CloseSessionResponse:
        raise InvalidParams("no such session")

    async def crash(params: v2.CloseSessionRequest) -> v2.CloseSessionResponse:
        raise KeyError("oops")

    async with pair() as (agent, bridge, _flow):
        agent.on(CLOSE, refuse)
        with pytest.raises(InvalidParams, match="no such session"):
            await bridge.call(CLOSE, REQUEST)
        agent.on(CLOSE, crash)
        with pytest.raises(InternalError) as raised:
            await bridge.call(CLOSE, REQUEST)
    assert raised.value.code == -32603


async def test_an_extension_answer_held_as_json_bytes_is_given_back_without_a_copy() -> None:
    answer = Raw(b'{"found":[1,2]}')

    async def unknown(method: str, params: Raw | None) -> Raw:
        return answer

    async with pair() as (agent, bridge, _flow):
        agent.on_unknown_request(unknown)
        got = await bridge.request("_x/find", {"q": 1}, Raw)
        typed = await bridge.request("_x/find", {"q": 1}, dict)
    assert got is answer
    assert typed == {"found": [1, 2]}


async def test_an_unserved_method_goes_to_the_unknown_handler_else_is_method_not_found() -> None:
    asked: list[tuple[str, bytes]] = []

    async def unknown(method: str, params: Raw | None) -> None:
        asked.append((method, bytes(params or b"")))
        raise MethodNotFound(f"Method not found: {method}")

    async with pair() as (agent, bridge, _flow):
        with pytest.raises(MethodNotFound):
            await agent.call(CLOSE, REQUEST)  # the bridge end serves nothing
        agent.on_unknown_request(unknown)
        with pytest.raises(MethodNotFound):
            await bridge.call(CLOSE, REQUEST)
    assert asked == [("session/close", b'{"sessionId":"s1"}')]


async def test_a_frame_is_decoded_for_the_handler_and_a_failing_handler_stays_on_its_side() -> None:
    got: list[v2.UpdateSessionNotification] = []

    def on_update(params: v2.UpdateSessionNotification) -> None:
        got.append(params)
        if len(got) == 2:
            raise RuntimeError("a bug in the projection")

    chunk = v2.AgentMessageChunk(message_id="m", content=v2.TextContent(text="hi"))
    params = {"sessionId": "s1", "update": chunk}
    frame = encode_notification("session/update", params)
    async with pair() as (agent, bridge, _flow):
        bridge.on(v2m.SESSION_UPDATE, on_update)
        agent.send_frame_nowait(frame)
        agent.send_frame_nowait(frame)  # logged, not raised into the sender
    assert [g.update for g in got] == [chunk, chunk]
    assert got[0].session_id == "s1"


async def test_frames_are_refused_once_the_flow_connection_is_closed_but_calls_go_on() -> None:
    async def close(params: v2.CloseSessionRequest) -> v2.CloseSessionResponse:
        return v2.CloseSessionResponse()

    async with pair() as (agent, bridge, flow):
        agent.on(CLOSE, close)
        await flow.aclose()
        with anyio.fail_after(TIMEOUT):
            await bridge.wait_closed()
        with pytest.raises(ConnectionClosed):
            agent.send_frame_nowait(encode_notification("session/update", {}))
        assert await bridge.call(CLOSE, REQUEST) == v2.CloseSessionResponse()


async def test_a_notification_reaches_a_coroutine_handler_awaited() -> None:
    got: list[v2.CancelSessionNotification] = []

    async def on_cancel(params: v2.CancelSessionNotification) -> None:
        await anyio.lowlevel.checkpoint()
        got.append(params)

    note = v2.CancelSessionNotification(session_id="s1")
    async with pair() as (agent, bridge, _flow):
        agent.on(v2m.SESSION_CANCEL, on_cancel)
        await bridge.notify(v2m.SESSION_CANCEL, note)
    assert got == [note]


async def test_a_delivered_notification_gets_the_object_or_its_bytes_decoded_and_raw() -> None:
    got: list[tuple[object, bytes]] = []

    def on_update(params: v2.UpdateSessionNotification, raw: bytes) -> None:
        got.append((params, raw))

    chunk = v2.AgentMessageChunk(message_id="m", content=v2.TextContent(text="hi"))
    given = v2.UpdateSessionNotification(session_id="s1", update=chunk)
    raw = b'{"sessionId":"s1","update":' + encode(chunk) + b"}"
    async with pair() as (client, bridge, _flow):
        client.on_notification("session/update", v2.UpdateSessionNotification, on_update, raw=True)
        assert bridge.deliver("session/update", given, raw) is None
        assert bridge.deliver("session/update", None, raw) is None
    assert got[0] == (given, raw)
    assert got[0][0] is given  # handed over, not copied
    assert got[1] == (given, raw)
    assert got[1][0] is not given  # decoded from the bytes


async def test_what_a_delivered_notifications_handler_returns_is_left_to_the_sender() -> None:
    order: list[str] = []

    async def later() -> None:
        order.append("awaited")

    def on_update(params: object, raw: bytes) -> Awaitable[None]:
        order.append("handled")
        return later()

    async with pair() as (client, bridge, _flow):
        client.on_notification("session/update", object, on_update, raw=True)
        pending = bridge.deliver("session/update", object(), b"{}")
        assert pending is not None
        order.append("returned")
        await pending
    assert order == ["handled", "returned", "awaited"]


async def test_a_calls_waiter_is_resolved_before_the_caller_resumes() -> None:
    from acp2 import _aio

    async def close(params: v2.CloseSessionRequest) -> v2.CloseSessionResponse:
        return v2.CloseSessionResponse()

    async def refuse(params: v2.CloseSessionRequest) -> v2.CloseSessionResponse:
        raise InvalidParams("no")

    async with pair() as (agent, bridge, _flow):
        agent.on(CLOSE, close)
        waiter = _aio.new_waiter()
        result = await bridge.call(CLOSE, REQUEST, waiter=waiter)
        assert waiter.done()
        assert waiter.result() == (result, None)
        agent.on(CLOSE, refuse)
        failed = _aio.new_waiter()
        with pytest.raises(InvalidParams):
            await bridge.call(CLOSE, REQUEST, waiter=failed)
        assert isinstance(failed.result()[1], InvalidParams)


# -- objects only: nothing encoded in this process is decoded again in it ---------------


class Codec:
    """Counts msgspec JSON encodes and decodes in this thread while entered (``sys``'s
    profile hook sees each C call). The rpc reader's envelope parse is not counted: it
    leaves params and results as raw bytes, so it decodes no update."""

    _ENVELOPE = (rpc_messages._frame_decoder.type, rpc_messages._entry_decoder.type)

    def __init__(self) -> None:
        self.encodes = self.decodes = 0

    def __enter__(self) -> Codec:
        sys.setprofile(self._count)
        return self

    def __exit__(self, *exc: object) -> None:
        sys.setprofile(None)

    def _count(self, frame: object, event: str, arg: object) -> None:
        if event != "c_call":
            return
        owner = getattr(arg, "__self__", None)
        if type(owner) is msgspec.json.Encoder or arg is msgspec.json.encode:
            self.encodes += 1
        elif arg is msgspec.json.decode or (
            type(owner) is msgspec.json.Decoder and owner.type not in self._ENVELOPE
        ):
            self.decodes += 1


V1_SESSION = "v1-session"
#: Updates of each kind per prompt in the counted runs.
EACH = 20


async def _v1_prompt(agent: Connection, params: v1.PromptRequest) -> v1.PromptResponse:
    """A v1 agent's turn: ``EACH`` text chunks and tool calls if the prompt says "go"."""
    (block,) = params.prompt
    assert isinstance(block, v1.TextContent)
    for i in range(EACH if block.text == "go" else 0):
        chunk = v1.AgentMessageChunk(content=v1.TextContent(text=f"tok{i} "))
        call = v1.ToolCall(tool_call_id=f"call{i}", title=f"step {i}", status="pending")
        for update in (chunk, call):
            note = v1.SessionNotification(session_id=V1_SESSION, update=update)
            await agent.notify(v1m.SESSION_UPDATE, note)
    return v1.PromptResponse(stop_reason="end_turn")


async def _back_counts(text: str) -> tuple[int, int]:
    """(encodes, decodes) in this process of one prompt through the in-process back bridge
    (acp2's client, the bridge, a v1 agent on a ``Connection`` of its own)."""

    async def new(params: v1.NewSessionRequest) -> v1.NewSessionResponse:
        return v1.NewSessionResponse(session_id=V1_SESSION)

    def setup(agent: Connection) -> None:
        agent.on(v1m.SESSION_NEW, new)
        agent.on(v1m.SESSION_PROMPT, partial(_v1_prompt, agent))

    back_ways.WAY = "in_process"
    result = v1.InitializeResponse(protocol_version=1)
    with anyio.fail_after(TIMEOUT):
        async with back_ways.client_of(setup, result, cwd="/tmp") as (_agent, client):
            session = await client.new_session()
            with Codec() as codec:
                assert await (await session.prompt(text)).wait() == "end_turn"
    assert len(session.state.tool_calls) == (EACH if text == "go" else 0)
    return codec.encodes, codec.decodes


async def test_the_back_bridge_decodes_each_update_once_from_the_wire_and_never_encodes_it() -> (
    None
):
    quiet = await _back_counts("nothing")
    busy = await _back_counts("go")

    per_update = [(b - q) / (2 * EACH) for b, q in zip(busy, quiet, strict=True)]
    # One encode: the v1 agent's own write of it; one decode: the bridge reading it.
    assert per_update == [1, 1]


def _front_agent() -> Agent:
    agent = Agent("front-count-agent", version="0", store=":memory:")

    @agent.prompt
    async def turn(turn: Turn) -> str:
        for i in range(EACH if turn.text == "go" else 0):
            await turn.say(f"tok{i} ")
            call = v2.ToolCallUpdate(tool_call_id=f"call{i}", title=f"step {i}")
            await turn.send(call)  # projected: v1 says it differently
        return "end_turn"

    return agent


async def test_the_front_bridge_decodes_nothing_the_agent_encoded() -> None:
    counts = []
    async with serving(_front_agent(), wait=True) as agents:
        wire = Wire(agents.open())
        await wire.request("initialize", ZED_INITIALIZE)
        new = await wire.request("session/new", {"cwd": "/tmp", "mcpServers": []})
        for text in ("nothing", "go"):
            params = {
                "sessionId": new["result"]["sessionId"],
                "prompt": [{"type": "text", "text": text}],
            }
            with Codec() as codec:
                answer = await wire.request("session/prompt", params)
            assert answer["result"] == {"stopReason": "end_turn"}
            counts.append((codec.encodes, codec.decodes))
    (quiet_encodes, quiet_decodes), (busy_encodes, busy_decodes) = counts

    # The one decode of a prompt is its v1 request's params, read from the wire: the
    # user message the agent records and the updates it emits reach the projection as
    # objects. A text chunk is encoded once: its bytes are both history and the v1 frame;
    # a tool call twice: its history row, and the v1 frame of its projection.
    assert quiet_decodes == busy_decodes == 1
    assert (busy_encodes - quiet_encodes) / EACH == 1 + 2

"""The in-process link between the front bridge and the agent runtime (``inprocess_pair``).

Each test joins two ends over a real v1-side ``Connection`` (the flow every frame ends
on) and checks what a caller on one end sees of the other end's handlers.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable
from contextlib import asynccontextmanager

import anyio
import anyio.lowlevel
import pytest
from msgspec import Raw

import acp2.schema as v2
import acp2.schema.methods as v2m
from acp2.bridge.inprocess import InProcessEnd, inprocess_pair
from acp2.errors import ConnectionClosed, InternalError, InvalidParams, MethodNotFound
from acp2.rpc import Connection
from acp2.rpc.messages import encode_notification
from acp2.schema.codec import encode
from acp2.transport.memory import memory_pair
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

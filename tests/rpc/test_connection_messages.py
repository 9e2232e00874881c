"""A Connection over a transport that delivers whole messages (the remote transports'
way: POST bodies, SSE events, WebSocket frames) reads them with the same peer."""

from __future__ import annotations

import json
from typing import Any

import anyio
import msgspec
import pytest

from acp2.rpc.connection import Connection, MessageReceive
from helpers import TIMEOUT

pytestmark = pytest.mark.anyio


class Num(msgspec.Struct):
    n: int


class MessageTransport:
    """Whole messages in through a memory stream (None ends it); output collected as the
    newline-delimited bytes the outbox writes."""

    def __init__(self) -> None:
        self.inbox, self._messages = anyio.create_memory_object_stream[bytes | None](16)
        self.sent = b""
        self.got_output = anyio.Event()

    async def receive_message(self) -> bytes | None:
        return await self._messages.receive()

    async def receive(self) -> bytes:  # the byte-stream way: never used here
        raise AssertionError("a message transport is read with receive_message")

    async def send(self, data: bytes) -> None:
        self.sent += data
        self.got_output.set()

    async def aclose(self) -> None:
        self._messages.close()

    def frames(self) -> list[Any]:
        return [json.loads(line) for line in self.sent.splitlines()]


async def double(params: Num) -> Num:
    return Num(params.n * 2)


async def answers(transport: MessageTransport, count: int) -> list[Any]:
    while len(transport.frames()) < count:
        transport.got_output = anyio.Event()
        await transport.got_output.wait()
    return transport.frames()


async def test_whole_messages_pretty_printed_or_batched_are_served_like_lines() -> None:
    transport = MessageTransport()
    assert isinstance(transport, MessageReceive)
    request = {"jsonrpc": "2.0", "id": 1, "method": "double", "params": {"n": 2}}
    batch = [{**request, "id": 2}, {**request, "id": 3, "params": {"n": 5}}]
    with anyio.fail_after(TIMEOUT):
        async with Connection(transport) as conn:
            conn.on_request("double", Num, double)
            await transport.inbox.send(json.dumps(request, indent=2).encode())
            await transport.inbox.send(json.dumps(batch).encode())
            first, second = await answers(transport, 2)
            await transport.inbox.send(None)
            await conn.wait_closed()
    assert first == {"jsonrpc": "2.0", "id": 1, "result": {"n": 4}}
    assert sorted((entry["id"], entry["result"]["n"]) for entry in second) == [(2, 4), (3, 10)]

"""When the WebSocket client acknowledges a durable link's messages: by time while they
keep coming, at once when a share of the server's retention is unacknowledged, and soon
after the link goes quiet.

The server here is a bare ``websockets`` server granting durability: it sends numbered
data frames in one burst and records every ack frame the client sends back.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from websockets.asyncio.server import ServerConnection, serve

from acp2.transport.durable import ACK_EVERY, Received, Retention, decode_frame, encode_data
from acp2.transport.ws_client import ACK_DELAY, ACK_SHARE, open_websocket
from helpers.timeouts import TIMEOUT

pytestmark = pytest.mark.anyio

MESSAGE = b'{"jsonrpc":"2.0","method":"x/tick","params":{}}'


class Burst:
    """Sends ``count`` data frames as fast as it can, then records acks until closed."""

    def __init__(self, count: int, retention: Retention) -> None:
        self.count = count
        self.retention = retention
        self.acks: list[int] = []
        self.url = ""
        self.all_acked = anyio.Event()

    def process_response(self, ws: ServerConnection, request: Any, response: Any) -> Any:
        response.headers["Acp-Connection-Id"] = "conn-1"
        response.headers["Acp2-Durable"] = self.retention.header()
        return response

    async def handler(self, ws: ServerConnection) -> None:
        for seq in range(1, self.count + 1):
            await ws.send(encode_data(seq, MESSAGE).decode())
        async for frame in ws:
            ack = decode_frame(frame).ack
            if ack is not None:
                self.acks.append(ack)
                if ack == self.count:
                    self.all_acked.set()


@asynccontextmanager
async def burst_server(count: int, retention: Retention | None = None) -> AsyncIterator[Burst]:
    burst = Burst(count, retention or Retention())
    async with serve(
        burst.handler, "127.0.0.1", 0, process_response=burst.process_response
    ) as server:
        burst.url = f"ws://127.0.0.1:{next(iter(server.sockets)).getsockname()[1]}/acp"
        yield burst


async def take(transport: Any, count: int) -> None:
    """Read until ``count`` messages arrived."""
    seen = 0
    while seen < count:
        chunk = await transport.receive()
        assert chunk, "the stream ended early"
        seen += chunk.count(b"\n")


async def test_a_fast_stream_is_acknowledged_by_time_not_every_64_messages() -> None:
    count = 8_000
    with anyio.fail_after(TIMEOUT):
        async with burst_server(count) as burst, open_websocket(burst.url) as transport:
            t0 = time.monotonic()
            await take(transport, count)
            await burst.all_acked.wait()
            elapsed = time.monotonic() - t0
    cap = Retention().messages // ACK_SHARE
    # One ack per interval, plus one per share of the retention: never one per 64 messages.
    assert len(burst.acks) <= elapsed / ACK_DELAY + count / cap + 2
    assert len(burst.acks) < count / ACK_EVERY / 2
    assert burst.acks == sorted(burst.acks)


async def test_a_quiet_link_is_acknowledged_within_the_interval() -> None:
    with anyio.fail_after(TIMEOUT):
        async with burst_server(3) as burst, open_websocket(burst.url) as transport:
            await take(transport, 3)
            t0 = time.monotonic()
            await burst.all_acked.wait()
            waited = time.monotonic() - t0
    assert burst.acks == [3]
    assert waited < 1.0  # the contract: within 1 s of going quiet


async def test_no_more_than_a_share_of_the_retention_goes_unacknowledged() -> None:
    retention = Retention(messages=400)
    cap = retention.messages // ACK_SHARE
    with anyio.fail_after(TIMEOUT):
        async with (
            burst_server(2000, retention) as burst,
            open_websocket(burst.url) as transport,
        ):
            await take(transport, 2000)
            await burst.all_acked.wait()
    gaps = [b - a for a, b in zip([0, *burst.acks], burst.acks, strict=False)]
    assert max(gaps) <= cap


def test_a_receiver_with_a_larger_ack_every_is_due_only_after_that_many() -> None:
    inbox = Received(ack_every=200)
    for seq in range(1, 200):
        inbox.accept(seq)
    assert not inbox.ack_due()
    inbox.accept(200)
    assert inbox.ack_due()
    assert inbox.acked() == 200
    assert not inbox.ack_due()

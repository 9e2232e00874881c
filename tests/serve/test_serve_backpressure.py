"""Backpressure: an agent streaming to a client that stopped reading waits (memory stays
bounded) and goes on when the client reads again; a connection whose client takes nothing
for ``stall_timeout`` ends (the link on its own: over a real socket the kernel's buffers
keep taking a little for a long while, which counts as progress)."""

from __future__ import annotations

import json

import anyio
import pytest
from serve_helpers import agent_app, initialize, is_idle, new_session, prompt, serve
from websockets.asyncio.client import ClientConnection, connect

from acp2.errors import ConnectionClosed
from acp2.rpc.outbox import DEFAULT_HIGH_WATER
from acp2.serve.config import ServeConfig
from acp2.serve.remote_connection import RemoteConnection
from helpers.timeouts import RUN_TIMEOUT, TIMEOUT

pytestmark = pytest.mark.anyio

BOUND = 64 * 1024


async def start_stream(ws: ClientConnection, count: int) -> None:
    await ws.send(json.dumps(initialize()))
    await ws.send(json.dumps(new_session(1)))
    with anyio.fail_after(TIMEOUT):
        while True:
            message = json.loads(await ws.recv())
            if message.get("id") == 1:
                break
    sid = message["result"]["sessionId"]
    await ws.send(json.dumps(prompt(2, sid, f"stream {count}")))


async def test_a_client_that_stops_reading_makes_the_agent_wait_within_the_bound() -> None:
    count = 60_000
    async with (
        serve(agent_app(max_held_bytes=BOUND)) as served,
        connect(served.ws_url, max_queue=4) as ws,  # a small queue fills up quickly
    ):
        await start_stream(ws, count)
        (connection,) = served.app.registry.connections()
        with anyio.fail_after(TIMEOUT):
            await connection.waiting.wait()
        await anyio.sleep(0.3)  # the socket's buffers fill up; then the agent waits
        # What is held is the bound plus at most one write of the agent's connection
        # (its own outbox makes the producer wait past DEFAULT_HIGH_WATER) -- not the
        # ~9 MB of the whole stream.
        assert connection.held <= BOUND + DEFAULT_HIGH_WATER
        seen = 0
        with anyio.fail_after(RUN_TIMEOUT):
            while True:
                text = await ws.recv()
                assert isinstance(text, str)
                if '"agent_message_chunk"' in text:
                    seen += 1
                elif '"idle"' in text and is_idle(json.loads(text)):
                    break
        assert seen == count
        assert connection.held == 0


async def test_a_connection_whose_client_takes_nothing_for_the_stall_timeout_ends() -> None:
    config = ServeConfig(max_held_bytes=16, stall_timeout=0.2)
    connection = RemoteConnection("c", "p", "websocket", config)
    connection.open_streams = 1  # a reader is attached, and takes nothing
    with anyio.fail_after(TIMEOUT), pytest.raises(ConnectionClosed):
        await connection.send(b'{"jsonrpc":"2.0","method":"m","params":{"pad":"0123456789"}}\n')
    assert connection.closed
    assert connection.held == 0


async def test_a_waiting_send_goes_on_once_the_reader_takes_the_queue() -> None:
    connection = RemoteConnection("c", "p", "websocket", ServeConfig(max_held_bytes=16))
    async with anyio.create_task_group() as tg:
        tg.start_soon(connection.send, b'{"method":"m","params":{"pad":"0123456789"}}\n')
        with anyio.fail_after(TIMEOUT):
            await connection.waiting.wait()
        assert len(connection.main.take()) == 1
    assert not connection.closed
    assert connection.held == 0


async def test_a_send_waiting_while_no_reader_is_attached_does_not_end_the_connection() -> None:
    config = ServeConfig(max_held_bytes=16, stall_timeout=0.1)
    connection = RemoteConnection("c", "p", "websocket", config)
    async with anyio.create_task_group() as tg:
        tg.start_soon(connection.send, b'{"method":"m","params":{"pad":"0123456789"}}\n')
        with anyio.fail_after(TIMEOUT):
            await connection.waiting.wait()
        await anyio.sleep(0.3)  # three stall timeouts with the link down
        assert not connection.closed
        connection.main.take()

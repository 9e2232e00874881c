"""The Connection's hot paths give the same results as its general ones.

* Notifications in the canonical layout are decoded straight from the line
  (:mod:`acp2.rpc.routes`); every other layout, or a line the strict decoder rejects,
  takes the general parser -- with the same outcome.
* Notification handlers may be plain functions (called inline) or coroutine functions
  (awaited before the next message), and may ask for the exact params bytes.
* Over a transport with ``send_nowait`` / ``pump`` (stdio, here over in-process pipes)
  frames are written directly and chunks are consumed in the loop's readiness callback;
  order, "response after earlier notifications", backpressure and close still hold.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.lowlevel
import msgspec
import pytest

from acp2.rpc.connection import YIELD_BYTES, Connection
from acp2.rpc.outbox import Outbox
from acp2.rpc.routes import Route, Routes
from acp2.transport._fdio import FdReader, FdWriter
from acp2.transport.memory import MemoryTransport, memory_pair
from acp2.transport.stdio import StdioTransport
from helpers import TIMEOUT, raw_peer

pytestmark = pytest.mark.anyio


class Num(msgspec.Struct):
    n: int


class Text(msgspec.Struct):
    text: str


@asynccontextmanager
async def pipe_pair() -> AsyncIterator[tuple[StdioTransport, StdioTransport]]:
    """Two stdio transports joined by two OS pipes, in this process."""
    a_r, b_w = os.pipe()
    b_r, a_w = os.pipe()
    a = StdioTransport(FdReader(a_r), FdWriter(a_w))
    b = StdioTransport(FdReader(b_r), FdWriter(b_w))
    try:
        yield a, b
    finally:
        await a.aclose()
        await b.aclose()


# -- routes (sans-IO) -----------------------------------------------------------------


def test_a_route_matches_only_its_exact_canonical_prefix_and_a_final_brace() -> None:
    routes = Routes()
    routes.add(Route("session/update", Num, lambda p: None, False))
    hit = b'{"jsonrpc":"2.0","method":"session/update","params":{"n":1}}'
    assert routes.match(hit) is not None
    assert routes.match(hit) is not None  # the hot route, tried first
    for line in (
        b'{"jsonrpc":"2.0","method":"session/updates","params":{"n":1}}',
        b'{"jsonrpc":"2.0","method":"session/update","params":{"n":1},"id":1',
        b'{"method":"session/update","jsonrpc":"2.0","params":{"n":1}}',
        b'{"jsonrpc": "2.0","method":"session/update","params":{"n":1}}',
        b'{"jsonrpc":"2.0","method":"session/upd\\u0061te","params":{"n":1}}',
    ):
        assert routes.match(line) is None, line


def test_a_params_type_msgspec_cannot_decode_only_takes_the_general_path() -> None:
    route = Route("odd", object(), lambda p: None, False)
    assert route.prefix == b""


def test_methods_needing_json_escapes_never_take_the_fast_path() -> None:
    route = Route('we"ird', Num, lambda p: None, False)
    assert route.prefix == b""
    routes = Routes()
    routes.add(route)
    assert routes.match(b'{"jsonrpc":"2.0","method":"we\\"ird","params":{"n":1}}') is None


# -- dispatch equivalence -------------------------------------------------------------


LAYOUTS = [
    b'{"jsonrpc":"2.0","method":"tick","params":{"n":7}}',
    b'{"method":"tick","jsonrpc":"2.0","params":{"n":7}}',
    b'{"jsonrpc": "2.0", "method": "tick", "params": {"n": 7}}',
    b'{"jsonrpc":"2.0","method":"tick","params":{"n":7,"extra":"kept out"}}',
]


@pytest.mark.parametrize("line", LAYOUTS)
async def test_every_layout_of_a_notification_reaches_the_handler_with_the_same_params(
    line: bytes,
) -> None:
    seen: list[Any] = []
    async with raw_peer() as (conn, wire):
        conn.on_notification("tick", Num, seen.append)
        await wire.send(line + b"\n")
        await wire.ping()
    assert seen == [Num(7)]


async def test_a_canonical_line_with_an_id_after_its_params_is_a_request() -> None:
    seen: list[Any] = []
    async with raw_peer() as (conn, wire):
        conn.on_notification("tick", Num, seen.append)
        await wire.send(b'{"jsonrpc":"2.0","method":"tick","params":{"n":1},"id":5}\n')
        frame = await wire.frame()
    assert seen == []
    assert frame["id"] == 5
    assert frame["error"]["code"] == -32601


async def test_canonical_lines_with_invalid_utf8_or_bad_params_are_not_dispatched() -> None:
    seen: list[Any] = []
    async with raw_peer() as (conn, wire):
        conn.on_notification("text", Text, seen.append)
        await wire.send(b'{"jsonrpc":"2.0","method":"text","params":{"text":"\xff"}}\n')
        error = await wire.frame()
        await wire.send(b'{"jsonrpc":"2.0","method":"text","params":{"text":1}}\n')
        await wire.send(b'{"jsonrpc":"2.0","method":"text","params":{"text":"ok"}}\n')
        await wire.ping()
    assert error["error"]["code"] == -32700
    assert seen == [Text("ok")]


async def test_a_raw_handler_gets_the_exact_params_bytes_on_both_paths() -> None:
    seen: list[tuple[Any, bytes]] = []
    async with raw_peer() as (conn, wire):
        conn.on_notification("tick", Num, lambda p, raw: seen.append((p, raw)), raw=True)
        await wire.send(b'{"jsonrpc":"2.0","method":"tick","params":{"n":1, "x":[]}}\n')
        await wire.send(b'{"params":{"n":2},"method":"tick","jsonrpc":"2.0"}\n')
        await wire.ping()
    assert seen == [(Num(1), b'{"n":1, "x":[]}'), (Num(2), b'{"n":2}')]


async def test_sync_and_async_handlers_run_in_arrival_order() -> None:
    order: list[str] = []

    async def slow(params: Num) -> None:
        await anyio.sleep(0.01)
        order.append(f"async {params.n}")

    async with raw_peer() as (conn, wire):
        conn.on_notification("sync", Num, lambda p: order.append(f"sync {p.n}"))
        conn.on_notification("async", Num, slow)
        lines = [
            b'{"jsonrpc":"2.0","method":"sync","params":{"n":1}}',
            b'{"jsonrpc":"2.0","method":"async","params":{"n":2}}',
            b'{"jsonrpc":"2.0","method":"sync","params":{"n":3}}',
        ]
        await wire.send(b"\n".join(lines) + b"\n")
        await wire.ping()
    assert order == ["sync 1", "async 2", "sync 3"]


# -- the direct paths over pipes --------------------------------------------------------


async def test_over_pipes_order_holds_and_responses_follow_earlier_notifications() -> None:
    seen: list[int] = []

    async def on_tick(params: Num) -> None:
        if params.n % 50 == 0:
            await anyio.lowlevel.checkpoint()  # some handlers await: the reader takes over
        seen.append(params.n)

    async with pipe_pair() as (a, b), Connection(a) as client, Connection(b) as agent:

        async def burst(params: Num) -> int:
            for i in range(params.n):
                agent.send_notification_nowait("tick", Num(i))
            return params.n

        client.on_notification("tick", Num, on_tick)
        agent.on_request("burst", Num, burst)
        with anyio.fail_after(TIMEOUT):
            assert await client.request("burst", Num(20_000), int) == 20_000
            assert await client.request("burst", Num(3), int) == 3
    assert seen == [*range(20_000), *range(3)]


async def test_over_pipes_requests_cancellation_and_close_behave_as_over_memory() -> None:
    started = anyio.Event()

    async def forever(_: Any) -> None:
        started.set()
        await anyio.sleep_forever()

    async with pipe_pair() as (a, b), Connection(b) as agent:
        agent.on_request("forever", msgspec.Raw, forever)
        agent.on_request("echo", Text, lambda p: _echo(p))
        async with Connection(a) as client:
            with anyio.fail_after(TIMEOUT):
                assert await client.request("echo", Text("x" * 300_000), Text) == Text(
                    "x" * 300_000
                )
                with anyio.move_on_after(0.05):
                    await client.request("forever", None, dict)
                assert started.is_set()
                assert await client.request("echo", Text("after"), Text) == Text("after")
        with anyio.fail_after(TIMEOUT):
            await agent.wait_closed()


async def _echo(params: Text) -> Text:
    return params


class DirectRecorder:
    """A transport with ``send_nowait`` that takes at most ``room`` bytes per call."""

    def __init__(self, inner: MemoryTransport, room: int) -> None:
        self.inner = inner
        self.room = room
        self.direct: list[bytes] = []
        self.sent: list[bytes] = []

    async def receive(self) -> bytes:
        return await self.inner.receive()

    def send_nowait(self, data: bytes) -> int:
        taken = data[: self.room]
        self.direct.append(taken)
        return len(taken)

    async def send(self, data: bytes) -> None:
        self.sent.append(data)

    async def aclose(self) -> None:
        await self.inner.aclose()


async def test_first_frame_goes_out_at_once_and_the_rest_of_the_iteration_is_coalesced() -> None:
    a, _b = memory_pair()
    transport = DirectRecorder(a, room=1 << 20)
    async with Connection(transport) as conn:
        await anyio.wait_all_tasks_blocked()  # nothing else ready: a direct write
        conn.send_notification_nowait("n", Num(1))
        assert transport.direct == [b'{"jsonrpc":"2.0","method":"n","params":{"n":1}}\n']
        conn.send_notification_nowait("n", Num(2))
        conn.send_notification_nowait("n", Num(3))
        assert len(transport.direct) == 1
        await anyio.lowlevel.checkpoint()
        await anyio.lowlevel.checkpoint()
        assert transport.direct[1:] == [
            b'{"jsonrpc":"2.0","method":"n","params":{"n":2}}\n'
            b'{"jsonrpc":"2.0","method":"n","params":{"n":3}}\n'
        ]


async def test_what_a_direct_write_cannot_take_goes_out_before_later_frames() -> None:
    a, _b = memory_pair()
    transport = DirectRecorder(a, room=10)
    async with Connection(transport) as conn:
        await anyio.wait_all_tasks_blocked()
        conn.send_notification_nowait("n", Num(1))
        conn.send_notification_nowait("n", Num(2))
        await conn._outbox.flush()
    first = b'{"jsonrpc":"2.0","method":"n","params":{"n":1}}\n'
    second = b'{"jsonrpc":"2.0","method":"n","params":{"n":2}}\n'
    assert transport.direct == [first[:10]]
    assert b"".join(transport.sent) == first[10:] + second


@pytest.mark.parametrize("hint", [True, False], ids=["coalesce_output", "no-hint"])
async def test_coalesce_output_lets_a_task_just_started_share_the_answers_write(
    hint: bool,
) -> None:
    a, b = memory_pair()
    transport = DirectRecorder(a, room=1 << 20)
    sent = anyio.Event()
    async with Connection(transport) as conn, anyio.create_task_group() as tg:

        async def turn() -> None:
            conn.send_notification_nowait("started", Num(1))
            sent.set()

        async def go(_: Any) -> Num:
            tg.start_soon(turn)
            if hint:
                conn.coalesce_output()
            return Num(2)

        conn.on_request("go", msgspec.Raw, go)
        await b.send(b'{"jsonrpc":"2.0","id":1,"method":"go"}\n')
        with anyio.fail_after(TIMEOUT):
            await sent.wait()
            await anyio.wait_all_tasks_blocked()  # the coalescing pass has ended
    writes = [chunk.count(b"\n") for chunk in transport.direct]
    assert writes == ([2] if hint else [1, 1])


async def test_a_tight_producer_is_told_to_yield_about_every_pipe_sized_write() -> None:
    async with pipe_pair() as (a, b), Connection(a) as conn, Connection(b):
        frame = b'{"jsonrpc":"2.0","method":"n","params":{"pad":"' + b"x" * 200 + b'"}}'
        puts = 0
        while not conn.congested:
            conn.send_frame_nowait(frame)
            puts += 1
        assert puts * (len(frame) + 1) >= YIELD_BYTES
        with anyio.fail_after(TIMEOUT):
            await conn.drain()
        assert not conn.congested


def test_outbox_without_direct_send_uses_the_writer_task_only() -> None:
    a, _b = memory_pair()
    outbox = Outbox(a, on_broken=lambda: None)
    assert outbox._direct is None


class Boom(BaseException):
    """Not an Exception: the request machinery must not swallow it."""


async def test_a_base_exception_from_a_request_handler_surfaces_when_the_connection_exits() -> None:
    async def explode(_: Any) -> None:
        raise Boom

    async def run() -> None:
        a, b = memory_pair()
        async with Connection(a) as client, Connection(b) as agent:
            agent.on_request("explode", msgspec.Raw, explode)
            with anyio.fail_after(TIMEOUT):
                client.send_frame_nowait(b'{"jsonrpc":"2.0","id":1,"method":"explode"}')
                await agent.wait_closed()

    with anyio.fail_after(TIMEOUT), pytest.raises(Boom):
        await run()

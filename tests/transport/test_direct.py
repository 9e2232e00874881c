"""direct_pair: the memory pair's contract, plus direct sends and pumped delivery."""

from __future__ import annotations

import anyio
import pytest

from acp2.errors import ConnectionClosed
from acp2.rpc import Connection
from acp2.transport.base import DirectReceive, DirectSend, Transport
from acp2.transport.direct import direct_pair
from helpers.timeouts import TIMEOUT

pytestmark = pytest.mark.anyio


async def test_bytes_sent_either_way_arrive_in_order() -> None:
    a, b = direct_pair()
    for end in (a, b):
        assert isinstance(end, Transport)
        assert isinstance(end, DirectSend)
        assert isinstance(end, DirectReceive)
    await a.send(b"one")
    assert a.send_nowait(b"two") == 3
    await a.send(b"")  # empty sends are no-ops, never a false end of stream
    await b.send(b"back")
    with anyio.fail_after(TIMEOUT):
        assert [await b.receive(), await b.receive()] == [b"one", b"two"]
        assert await a.receive() == b"back"


async def test_a_pumped_chunk_is_consumed_in_a_later_loop_callback_not_in_the_send() -> None:
    a, b = direct_pair()
    got: list[bytes] = []

    def consume(chunk: bytes) -> bool:
        got.append(chunk)
        return chunk != b"stop"

    async with anyio.create_task_group() as tg:
        results: list[bool] = []

        async def pump() -> None:
            results.append(await b.pump(consume))

        tg.start_soon(pump)
        await anyio.wait_all_tasks_blocked()
        a.send_nowait(b"x")
        a.send_nowait(b"stop")
        a.send_nowait(b"after")
        assert got == []  # nothing runs inside the sender's write
        with anyio.fail_after(TIMEOUT):
            while not results:
                await anyio.lowlevel.checkpoint()
    assert got == [b"x", b"stop"]
    assert results == [True]  # consume asked to stop: the rest waits for the next pump
    a.send_nowait(b"stop")
    with anyio.fail_after(TIMEOUT):
        assert await b.pump(consume) is True
    assert got[2:] == [b"after", b"stop"]


async def test_closing_one_end_delivers_what_was_sent_then_the_end() -> None:
    a, b = direct_pair()
    a.send_nowait(b"last")
    await a.aclose()
    await a.aclose()  # idempotent
    got: list[bytes] = []
    with anyio.fail_after(TIMEOUT):
        assert await b.pump(lambda chunk: got.append(chunk) is None) is False
        assert await b.receive() == b""
    assert got == [b"last"]
    with pytest.raises(ConnectionClosed):
        b.send_nowait(b"x")
    with pytest.raises(ConnectionClosed):
        await a.send(b"x")


async def test_a_full_direction_takes_nothing_now_and_send_waits_for_the_reader() -> None:
    a, b = direct_pair(limit=4)
    assert a.send_nowait(b"12345") == 5  # under the limit when offered: taken whole
    assert a.send_nowait(b"6") == 0
    sent = anyio.Event()

    async def second() -> None:
        await a.send(b"6")
        sent.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(second)
        await anyio.wait_all_tasks_blocked()
        assert not sent.is_set()
        with anyio.fail_after(TIMEOUT):
            assert await b.receive() == b"12345"
            await sent.wait()
            assert await b.receive() == b"6"


async def test_connections_on_a_direct_pair_exchange_requests() -> None:
    a, b = direct_pair()

    async def echo(params: object) -> object:
        return params

    server = Connection(b, name="server")
    server.on_request("echo", object, echo)
    with anyio.fail_after(TIMEOUT):
        async with Connection(a, name="client") as client, server:
            assert await client.request("echo", {"n": 1}, object) == {"n": 1}
            assert await client.request("echo", [2], object) == [2]

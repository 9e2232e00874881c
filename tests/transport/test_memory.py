"""memory_pair: ordered chunks, end of stream, closing (the Transport contract)."""

from __future__ import annotations

import anyio
import pytest

from acp2.errors import ConnectionClosed
from acp2.transport.base import Transport
from acp2.transport.memory import memory_pair
from helpers.timeouts import TIMEOUT

pytestmark = pytest.mark.anyio


async def test_bytes_sent_on_one_end_arrive_in_order_on_the_other() -> None:
    a, b = memory_pair()
    assert isinstance(a, Transport)
    assert isinstance(b, Transport)
    await a.send(b"one")
    await a.send(b"")  # empty sends are no-ops, never a false end of stream
    await a.send(b"two")
    await b.send(b"back")
    with anyio.fail_after(TIMEOUT):
        assert [await b.receive(), await b.receive()] == [b"one", b"two"]
        assert await a.receive() == b"back"


async def test_closing_one_end_ends_the_other_stream_and_fails_its_sends() -> None:
    a, b = memory_pair()
    await a.send(b"last")
    await a.aclose()
    await a.aclose()  # idempotent
    with anyio.fail_after(TIMEOUT):
        assert await b.receive() == b"last"
        assert await b.receive() == b""
        assert await b.receive() == b""
    with pytest.raises(ConnectionClosed):
        await b.send(b"x")
    with pytest.raises(ConnectionClosed):
        await a.send(b"x")
    assert await a.receive() == b""


async def test_send_waits_while_the_other_end_is_not_reading() -> None:
    a, b = memory_pair(max_buffered_chunks=1)
    await a.send(b"1")
    sent = anyio.Event()

    async def second() -> None:
        await a.send(b"2")
        sent.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(second)
        await anyio.wait_all_tasks_blocked()
        assert not sent.is_set()
        with anyio.fail_after(TIMEOUT):
            assert await b.receive() == b"1"
            await sent.wait()
            assert await b.receive() == b"2"

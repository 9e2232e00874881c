"""Backpressure on a peer that does not read our output (issue 10, section 4).

Over a memory pair holding one chunk per direction, so unread output stays ours: the
connection stops reading while more than ``max_unread`` bytes wait for the peer, answers
everything once it reads, and closes with a reason when it reads nothing for
``stall_timeout``.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from anyio import wait_all_tasks_blocked

from acp2.rpc import Connection
from acp2.rpc.connection import REQUEST_BURST
from acp2.rpc.framing import LineFramer
from acp2.rpc.outbox import WRITE_PIECE
from acp2.transport.memory import MemoryTransport, memory_pair
from helpers.timeouts import TIMEOUT

pytestmark = pytest.mark.anyio

ANSWER = "x" * 16384
MAX_UNREAD = 256 * 1024
COUNT = 1000  # 16 MiB of answers


def request(rid: int) -> bytes:
    return b'{"jsonrpc":"2.0","id":%d,"method":"big","params":{}}\n' % rid


async def read_answers(wire: MemoryTransport, count: int) -> list[Any]:
    framer = LineFramer()
    ids: list[Any] = []
    while len(ids) < count:
        chunk = await wire.receive()
        assert chunk, "the connection closed"
        ids.extend(json.loads(bytes(line))["id"] for line in framer.feed(chunk))  # type: ignore[arg-type]
    return ids


async def test_reading_pauses_while_our_output_is_unread_and_everything_is_answered_later() -> None:
    ours, wire = memory_pair(max_buffered_chunks=1)
    served = 0

    async def big(params: Any) -> str:
        nonlocal served
        served += 1
        return ANSWER

    conn = Connection(ours, max_unread=MAX_UNREAD)
    conn.on_request("big", dict, big)
    with anyio.fail_after(TIMEOUT):
        async with conn, anyio.create_task_group() as tg:

            async def send_all() -> None:
                for rid in range(COUNT):
                    await wire.send(request(rid))

            tg.start_soon(send_all)
            await wait_all_tasks_blocked()  # the sender is stuck: the connection stopped
            assert served < COUNT // 2
            bound = MAX_UNREAD + REQUEST_BURST * (len(ANSWER) + 64) + WRITE_PIECE
            assert conn._outbox.backlog <= bound
            assert await read_answers(wire, COUNT) == list(range(COUNT))
            assert served == COUNT
            assert not conn.closed


async def test_a_peer_that_reads_nothing_is_disconnected_after_the_stall_timeout() -> None:
    ours, wire = memory_pair(max_buffered_chunks=1)

    async def big(params: Any) -> str:
        return ANSWER

    conn = Connection(ours, max_unread=MAX_UNREAD, stall_timeout=0.2)
    conn.on_request("big", dict, big)
    with anyio.fail_after(TIMEOUT):
        async with conn, anyio.create_task_group() as tg:

            async def send_all() -> None:
                for rid in range(COUNT):
                    await wire.send(request(rid))

            tg.start_soon(send_all)
            await conn.wait_closed()
            tg.cancel_scope.cancel()
    assert conn.close_reason is not None
    assert "unread" in conn.close_reason
    assert conn._outbox.backlog == 0  # the unread output was dropped, not kept


async def test_close_reason_is_none_when_the_peer_ends_the_stream() -> None:
    ours, wire = memory_pair()
    with anyio.fail_after(TIMEOUT):
        async with Connection(ours) as conn:
            await wire.aclose()
            await conn.wait_closed()
    assert conn.close_reason is None

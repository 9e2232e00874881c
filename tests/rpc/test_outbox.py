"""Outbox: big frames go out without being copied, in order, each with one newline."""

from __future__ import annotations

import anyio
import pytest

from acp2.rpc.outbox import WRITE_PIECE, Outbox
from acp2.transport.memory import memory_pair

pytestmark = pytest.mark.anyio


async def test_a_lone_big_frame_is_written_in_pieces_with_one_newline_then_the_next() -> None:
    ours, theirs = memory_pair()
    big = b'"' + b"x" * (3 * WRITE_PIECE) + b'"'
    outbox = Outbox(ours, on_broken=lambda: None)
    received = b""
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(outbox.run)
            outbox.put(big)
            assert outbox.backlog == len(big) + 1
            outbox.put(b"2")
            await outbox.flush()
            assert outbox.backlog == 0
            while received.count(b"\n") < 2:
                received += await theirs.receive()
            outbox.finish()
    assert received == big + b"\n2\n"


async def test_backlog_counts_what_a_write_has_not_handed_over_yet() -> None:
    ours, theirs = memory_pair(max_buffered_chunks=1)
    outbox = Outbox(ours, on_broken=lambda: None, max_unread=WRITE_PIECE)
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(outbox.run)
            outbox.put(b"y" * (4 * WRITE_PIECE))
            await anyio.wait_all_tasks_blocked()  # one piece buffered, one in send
            assert outbox.backlog >= 2 * WRITE_PIECE
            assert outbox.unread_exceeded
            got = 0
            while got < 4 * WRITE_PIECE + 1:
                got += len(await theirs.receive())
            await outbox.flush()
            assert not outbox.unread_exceeded
            outbox.finish()

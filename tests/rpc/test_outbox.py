"""Outbox: big frames go out without being copied, in order, each with one newline; its
state (who owns the stream) moves only as its transition table allows."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import anyio.lowlevel
import pytest

from acp2.rpc.outbox import TRANSITIONS, WRITE_PIECE, Outbox
from acp2.transport._fdio import FdReader, FdWriter
from acp2.transport.memory import memory_pair
from acp2.transport.stdio import StdioTransport
from helpers.timeouts import TIMEOUT

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def pipe_pair() -> AsyncIterator[tuple[StdioTransport, StdioTransport]]:
    """Two stdio transports (direct writes) joined by two OS pipes, in this process."""
    a_r, b_w = os.pipe()
    b_r, a_w = os.pipe()
    a = StdioTransport(FdReader(a_r), FdWriter(a_w))
    b = StdioTransport(FdReader(b_r), FdWriter(b_w))
    try:
        yield a, b
    finally:
        await a.aclose()
        await b.aclose()


async def read_lines(transport: StdioTransport, count: int) -> bytes:
    data = b""
    while data.count(b"\n") < count:
        data += await transport.receive()
    return data


async def test_a_lone_big_frame_is_written_in_pieces_with_one_newline_then_the_next() -> None:
    ours, theirs = memory_pair()
    big = b'"' + b"x" * (3 * WRITE_PIECE) + b'"'
    outbox = Outbox(ours, on_broken=lambda: None)
    received = b""
    with anyio.fail_after(TIMEOUT):
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
    with anyio.fail_after(TIMEOUT):
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


# --- the state machine -----------------------------------------------------------------


def test_broken_is_final_and_every_other_state_can_be_left_and_reached() -> None:
    assert TRANSITIONS["broken"] == frozenset()
    states = set(TRANSITIONS)
    assert states == {"idle", "coalescing", "writing", "broken"}
    for state in states - {"broken"}:
        assert "broken" in TRANSITIONS[state]
        assert any(state in TRANSITIONS[other] for other in states - {state})


async def test_direct_mode_writes_the_first_frame_at_once_then_coalesces_for_one_pass() -> None:
    async with pipe_pair() as (ours, theirs):
        outbox = Outbox(ours, on_broken=lambda: None)
        with anyio.fail_after(TIMEOUT):
            async with anyio.create_task_group() as tg:
                tg.start_soon(outbox.run)
                assert outbox.state == "idle"
                outbox.put(b"1")
                assert outbox.state == "coalescing"
                assert outbox.backlog == 0  # written in the same step
                outbox.put(b"2")
                assert outbox.backlog == 2  # held to the end of the pass
                while outbox.state != "idle":
                    await anyio.lowlevel.checkpoint()
                assert await read_lines(theirs, 2) == b"1\n2\n"
                outbox.finish()
        assert outbox.writer_state == "stopped"


async def test_coalesce_holds_even_the_first_frame_until_ready_tasks_ran() -> None:
    async with pipe_pair() as (ours, theirs):
        outbox = Outbox(ours, on_broken=lambda: None)
        with anyio.fail_after(TIMEOUT):
            async with anyio.create_task_group() as tg:
                tg.start_soon(outbox.run)
                await anyio.wait_all_tasks_blocked()

                async def task() -> None:
                    outbox.put(b"from the task")

                tg.start_soon(task)  # ready, not run yet
                outbox.coalesce()
                outbox.put(b"response")
                assert outbox.backlog > 0
                assert await read_lines(theirs, 2) == b"response\nfrom the task\n"
                outbox.finish()


async def test_a_failed_write_breaks_the_outbox_and_later_frames_are_dropped() -> None:
    ours, theirs = memory_pair()
    broken: list[bool] = []
    outbox = Outbox(ours, on_broken=lambda: broken.append(True))
    with anyio.fail_after(TIMEOUT):
        async with anyio.create_task_group() as tg:
            tg.start_soon(outbox.run)
            await theirs.aclose()
            await ours.aclose()
            outbox.put(b"lost")
            await outbox.flush()
    assert outbox.state == "broken"
    assert broken == [True]
    outbox.put(b"dropped")
    assert outbox.backlog == 0
    assert outbox.writer_state == "stopped"


async def test_finish_lets_the_writer_write_what_is_queued_before_it_stops() -> None:
    ours, theirs = memory_pair()
    outbox = Outbox(ours, on_broken=lambda: None)
    with anyio.fail_after(TIMEOUT):
        async with anyio.create_task_group() as tg:
            tg.start_soon(outbox.run)
            outbox.put(b"last")
            outbox.finish()
            assert outbox.writer_state == "finishing"
        assert await theirs.receive() == b"last\n"
    assert outbox.writer_state == "stopped"

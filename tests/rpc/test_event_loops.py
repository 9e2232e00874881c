"""acp2 runs on asyncio -- the standard loop and uvloop -- and says so at once elsewhere."""

from __future__ import annotations

import asyncio
import os
from typing import Any

import msgspec
import pytest

from acp2.errors import LocalProtocolError
from acp2.rpc.connection import Connection
from acp2.transport._fdio import FdReader, FdWriter
from acp2.transport.memory import memory_pair
from acp2.transport.stdio import StdioTransport
from helpers import TIMEOUT

pytestmark = pytest.mark.anyio


async def test_this_suite_runs_on_the_event_loop_it_names(anyio_backend: Any) -> None:
    on_uvloop = isinstance(anyio_backend, tuple) and anyio_backend[1].get("use_uvloop", False)
    loop_module = type(asyncio.get_running_loop()).__module__
    assert loop_module.startswith("uvloop") == on_uvloop


def test_entering_a_connection_under_trio_fails_at_once_with_a_clear_error() -> None:
    trio = pytest.importorskip("trio")
    ours, _theirs = memory_pair()

    async def enter() -> None:
        with trio.fail_after(TIMEOUT):
            async with Connection(ours):
                pytest.fail("entered a Connection under trio")

    with pytest.raises(LocalProtocolError, match=r"acp2 runs on asyncio \(uvloop works too\)"):
        trio.run(enter)


class Num(msgspec.Struct):
    n: int


async def _ping_over_pipes() -> Num:
    a_r, b_w = os.pipe()
    b_r, a_w = os.pipe()
    ours = StdioTransport(FdReader(a_r), FdWriter(a_w))
    theirs = StdioTransport(FdReader(b_r), FdWriter(b_w))

    async def double(params: Num) -> Num:
        return Num(params.n * 2)

    try:
        async with Connection(ours) as client, Connection(theirs) as agent:
            agent.on_request("double", Num, double)
            return await asyncio.wait_for(client.request("double", Num(21), Num), TIMEOUT)
    finally:
        await ours.aclose()
        await theirs.aclose()


@pytest.mark.parametrize("runner", ["asyncio.run", "uvloop.run"])
def test_requests_are_served_over_stdio_under_a_loop_not_started_by_anyio(runner: str) -> None:
    # Requests read over stdio are handled in the loop's readiness callback, where anyio
    # must still see asyncio (sniffio finds no current task there).
    run = asyncio.run if runner == "asyncio.run" else pytest.importorskip("uvloop").run
    assert run(_ping_over_pipes()) == Num(42)

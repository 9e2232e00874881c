"""acp2 runs on asyncio -- the standard loop and uvloop -- and says so at once elsewhere."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from acp2.errors import LocalProtocolError
from acp2.rpc.connection import Connection
from acp2.transport.memory import memory_pair

pytestmark = pytest.mark.anyio


async def test_this_suite_runs_on_the_event_loop_it_names(anyio_backend: Any) -> None:
    on_uvloop = isinstance(anyio_backend, tuple) and anyio_backend[1].get("use_uvloop", False)
    loop_module = type(asyncio.get_running_loop()).__module__
    assert loop_module.startswith("uvloop") == on_uvloop


def test_entering_a_connection_under_trio_fails_at_once_with_a_clear_error() -> None:
    trio = pytest.importorskip("trio")
    ours, _theirs = memory_pair()

    async def enter() -> None:
        with trio.fail_after(5):
            async with Connection(ours):
                pytest.fail("entered a Connection under trio")

    with pytest.raises(LocalProtocolError, match=r"acp2 runs on asyncio \(uvloop works too\)"):
        trio.run(enter)

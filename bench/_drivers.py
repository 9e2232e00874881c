"""Asyncio helpers shared by the SDK bench drivers (standard library only).

``sdk_client.py`` (Python SDK 0.12.1, v1) and ``sdk2_client.py`` (1.0.0rc3, v2) run in the
SDK's venv and drive the same four scenarios with the same sizes; what differs is how each
SDK opens a session and ends a turn. This module holds what does not: the sequential
timer, the windowed fan-out, and the command line (whose sizes the acp2 hooks share).
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from typing import Any

from _common import emit_result

Scenario = Callable[[argparse.Namespace], Coroutine[Any, Any, dict[str, Any]]]


async def timed(count: int, warmup: int, call: Callable[[], Awaitable[Any]]) -> list[float]:
    """Await ``call()`` ``warmup + count`` times one after another; return the last timings."""
    samples: list[float] = []
    for i in range(warmup + count):
        t0 = time.perf_counter()
        await call()
        if i >= warmup:
            samples.append(time.perf_counter() - t0)
    return samples


async def limited(window: int, count: int, make: Callable[[int], Awaitable[Any]]) -> list[Any]:
    """Run ``make(i)`` for ``i < count`` with at most ``window`` in flight; return results."""
    gate = asyncio.Semaphore(window)

    async def one(i: int) -> Any:
        async with gate:
            return await make(i)

    return list(await asyncio.gather(*(one(i) for i in range(count))))


def size_parser(description: str | None) -> argparse.ArgumentParser:
    """A parser with the sizes every scenario takes (the acp2 hooks add their own)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--updates", type=int, default=100_000)
    parser.add_argument("--pings", type=int, default=2000)
    parser.add_argument("--prompts", type=int, default=1000)
    parser.add_argument("--warmup", type=int, default=50)
    parser.add_argument("--replay", type=int, default=10_000)
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--window", type=int, default=64)
    return parser


def driver_main(description: str | None, scenarios: Mapping[str, Scenario]) -> None:
    """Parse ``SCENARIO [sizes]``, run that scenario and print its one result line."""
    parser = size_parser(description)
    parser.add_argument("scenario", choices=sorted(scenarios))
    args = parser.parse_args()
    emit_result(asyncio.run(scenarios[args.scenario](args)))

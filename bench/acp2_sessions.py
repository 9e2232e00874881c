"""acp2 many sessions: 1 000 sessions on one connection, one short turn each.

HOOK (coordinator): benchmark 4. Sessions are created, then prompted (``"stream 1"``, wait
for idle), at most ``--window`` in flight; memory per session is the RSS growth (after a
GC) of each process divided by the number of sessions. Skipped while acp2's agent, client
or stdio transport is missing. Same metrics as ``sdk_client.py sessions``, and then, in a
second pass of a fifth as many sessions under :mod:`tracemalloc`, the Python heap per
session on each side and the allocation sites that grew most (``*_heap_sites``).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

from _acp2 import agent_argv, require, size_arguments
from _common import SESSION_CWD, emit_result, self_stats, stream_prompt, trace_report, trace_start

NEEDS = ("acp2.agent", "acp2.client", "acp2.transport.stdio")


async def measure(args: argparse.Namespace, store: str) -> dict[str, Any]:
    """Open and prompt ``args.sessions`` sessions; time and memory per session."""
    import anyio

    from acp2.client import connect

    async with connect(agent_argv(store)) as client:
        agent0 = await client.ext_request("_bench/stats", {"gc": True})
        own0 = self_stats(collect=True)
        limiter = anyio.CapacityLimiter(args.window)
        sessions: list[Any] = []

        async def open_one() -> None:
            async with limiter:
                sessions.append(await client.new_session(SESSION_CWD))

        async def turn(session: Any) -> None:
            async with limiter:
                await (await session.prompt(stream_prompt(1))).wait()

        async def open_and_prompt(count: int) -> None:
            first = len(sessions)
            async with anyio.create_task_group() as tg:
                for _ in range(count):
                    tg.start_soon(open_one)
            async with anyio.create_task_group() as tg:
                for session in sessions[first:]:
                    tg.start_soon(turn, session)

        t0 = time.perf_counter()
        await open_and_prompt(args.sessions)
        seconds = time.perf_counter() - t0
        own1 = self_stats(collect=True)
        agent1 = await client.ext_request("_bench/stats", {"gc": True})
        # Then the Python heap per session on both sides, and where it goes (tracemalloc
        # slows everything down, so it runs on its own, after the timed pass).
        traced = max(1, args.sessions // 5)
        await client.ext_request("_bench/trace", {"start": True})
        trace_start()
        await open_and_prompt(traced)
        own = trace_report(traced)
        agent = await client.ext_request("_bench/trace", {"count": traced})
    n = args.sessions
    return {
        "sessions": n,
        "seconds": seconds,
        "agent_kib_per_session": (agent1["rss_kib"] - agent0["rss_kib"]) / n,
        "client_kib_per_session": (own1["rss_kib"] - own0["rss_kib"]) / n,
        "agent_heap_kib_per_session": agent["bytes_per"] / 1024,
        "client_heap_kib_per_session": own["bytes_per"] / 1024,
        "agent_heap_sites": agent["sites"],
        "client_heap_sites": own["sites"],
    }


def main() -> None:
    """Command line: the size options of ``_acp2.size_arguments``."""
    args = size_arguments(__doc__).parse_args()
    require(*NEEDS)
    import anyio

    with tempfile.TemporaryDirectory(prefix="acp2-bench-") as tmp:
        store = str(Path(tmp) / "history.sqlite3") if args.store == "file" else ":memory:"
        emit_result(anyio.run(measure, args, store))


if __name__ == "__main__":
    main()

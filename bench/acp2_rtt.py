"""acp2 round trip: p50/p99 of a ``_bench/ping`` request and of a prompt that ends at once.

HOOK (coordinator): benchmark 2 on ``acp2.client`` (prompt sent -> idle received, i.e.
``await (await session.prompt(...)).wait()``). Skipped while acp2's agent, client or
stdio transport is missing. Same metrics as ``sdk_client.py rtt``.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import Any

from _acp2 import agent_argv, require, size_arguments
from _common import SESSION_CWD, cpu_seconds, emit_result, latency_metrics, stream_prompt
from _drivers import timed

NEEDS = ("acp2.agent", "acp2.client", "acp2.transport.stdio")


async def measure(args: argparse.Namespace, store: str) -> dict[str, Any]:
    """Return ping and prompt latency percentiles in µs."""
    from acp2.client import connect

    async with connect(agent_argv(store)) as client:
        session = await client.new_session(SESSION_CWD)

        async def ping() -> None:
            await client.ext_request("_bench/ping", {})

        async def empty_turn() -> None:
            await (await session.prompt(stream_prompt(0))).wait()

        pings = await timed(args.pings, args.warmup, ping)
        agent0 = await client.ext_request("_bench/stats", {})
        own0 = cpu_seconds()
        prompts = await timed(args.prompts, args.warmup, empty_turn)
        own = cpu_seconds() - own0
        agent1 = await client.ext_request("_bench/stats", {})
    # CPU per prompt of each side (warm-up included): unlike the latency, it does not
    # depend on how the scheduler places the two processes.
    count = args.prompts + args.warmup
    cpu = {
        "prompt_client_cpu_us": own * 1e6 / count,
        "prompt_agent_cpu_us": (agent1["cpu_s"] - agent0["cpu_s"]) * 1e6 / count,
    }
    return {**latency_metrics("ping", pings), **latency_metrics("prompt", prompts), **cpu}


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

"""acp2 stream throughput: one prompt streams N ``agent_message_chunk`` updates over stdio.

HOOK (coordinator): the client side of benchmark 1, written against
``docs/writing-a-client.md`` (``acp2.client.connect``, ``session.prompt``, ``work.wait``,
``client.ext_request``). Skipped while acp2's agent, client or stdio transport is missing.
The agent side is ``acp2_agent.py``. Same metrics as ``sdk_client.py stream``.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

from _acp2 import agent_argv, require, size_arguments
from _common import SESSION_CWD, cpu_seconds, emit_result, maxrss_kib, stream_metrics, stream_prompt

NEEDS = ("acp2.agent", "acp2.client", "acp2.transport.stdio")


async def measure(args: argparse.Namespace, store: str) -> dict[str, Any]:
    """Time one prompt of ``args.updates`` chunks; CPU and peak RSS of both processes."""
    from acp2.client import connect

    async with connect(agent_argv(store)) as client:
        session = await client.new_session(SESSION_CWD)
        await (await session.prompt(stream_prompt(10))).wait()
        agent0 = await client.ext_request("_bench/stats", {})
        cpu0 = cpu_seconds()
        t0 = time.perf_counter()
        work = await session.prompt(stream_prompt(args.updates))
        stop = await work.wait()
        seconds = time.perf_counter() - t0
        own = {"cpu_s": cpu_seconds() - cpu0, "maxrss_kib": maxrss_kib()}
        agent1 = await client.ext_request("_bench/stats", {})
        expected = sum(len(f"tok{i} ") for i in range(args.updates))
        if stop != "end_turn" or len(work.text) != expected:
            raise RuntimeError(f"stream ended {stop!r} with {len(work.text)} of {expected} chars")
    agent = {"cpu_s": agent1["cpu_s"] - agent0["cpu_s"], "maxrss_kib": agent1["maxrss_kib"]}
    return stream_metrics(args.updates, seconds, own, agent)


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

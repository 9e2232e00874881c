"""acp2 prompt timeline: where the time of one prompt round trip goes, stage by stage.

Both processes record stage timestamps (``_timeline.py``: the client here, the bench
agent with ``--timeline``) on the one monotonic clock; for each of ``--prompts`` empty
prompts (``stream 0``: the rtt scenario's prompt -> idle) every stage's first (and,
for stages that repeat, last) time after the send is taken relative to the send, and
the medians are reported in µs as ``<stage>_us`` / ``<stage>_last_us``, with the round
trip itself as ``total_us``. The instrumentation adds a few µs (one wrapper per stage).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import _timeline
from _acp2 import AGENT, require, size_arguments
from _common import SESSION_CWD, emit_result, stream_prompt

NEEDS = ("acp2.agent", "acp2.client", "acp2.transport.stdio")
#: Stages that happen once per prompt or more (first and last are both reported).
REPEATED = ("a.read", "c.read", "c.decoded", "c.reduced")


def offsets(sends: list[int], events: list[tuple[str, int]]) -> dict[str, list[float]]:
    """Per stage, its first (and last) time after each send, in µs from that send."""
    found: dict[str, list[float]] = defaultdict(list)
    ordered = sorted(events, key=lambda e: e[1])
    bounds = [*sends[1:], 1 << 62]
    i = 0
    for start, end in zip(sends, bounds, strict=True):
        first: dict[str, int] = {}
        last: dict[str, int] = {}
        while i < len(ordered) and ordered[i][1] < start:
            i += 1
        j = i
        while j < len(ordered) and ordered[j][1] < end:
            stage, t = ordered[j]
            first.setdefault(stage, t)
            last[stage] = t
            j += 1
        for stage, t in first.items():
            found[stage].append((t - start) / 1000)
        for stage, t in last.items():
            if stage in REPEATED:
                found[stage + "_last"].append((t - start) / 1000)
    return found


async def measure(args: argparse.Namespace, store: str) -> dict[str, Any]:
    """Run the prompts; return the median offset of every stage."""
    from acp2.client import connect

    argv = [__import__("sys").executable, str(AGENT), "--store", store, "--timeline"]
    _timeline.install_client()
    sends: list[int] = []
    totals: list[float] = []
    async with connect(argv) as client:
        session = await client.new_session(SESSION_CWD)
        for _ in range(args.warmup):
            await (await session.prompt(stream_prompt(0))).wait()
        await client.ext_request("_bench/timeline", {})
        _timeline.drain()
        for _ in range(args.prompts):
            t0 = time.perf_counter_ns()
            sends.append(t0)
            await (await session.prompt(stream_prompt(0))).wait()
            totals.append((time.perf_counter_ns() - t0) / 1000)
        mine = _timeline.drain()
        agent = [(str(s), int(t)) for s, t in await client.ext_request("_bench/timeline", {})]
    found = offsets(sends, mine + agent)
    metrics: dict[str, Any] = {"total_us": statistics.median(totals), "prompts": len(sends)}
    for stage, values in found.items():
        if len(values) >= len(sends) // 2:  # present in most prompts
            metrics[stage.replace(".", "_") + "_us"] = statistics.median(values)
    return metrics


def main() -> None:
    """Command line: the size options of ``_acp2.size_arguments`` (``--prompts``)."""
    args = size_arguments(__doc__).parse_args()
    require(*NEEDS)
    import anyio

    with tempfile.TemporaryDirectory(prefix="acp2-bench-") as tmp:
        store = str(Path(tmp) / "history.sqlite3") if args.store == "file" else ":memory:"
        emit_result(anyio.run(measure, args, store))


if __name__ == "__main__":
    main()

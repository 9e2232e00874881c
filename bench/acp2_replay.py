"""acp2 replay: ``session/resume`` with full replay of a stored 10 000-update conversation.

HOOK (coordinator): benchmark 3. A first agent process stores the conversation in its
SQLite history (``_bench/seed`` in ``acp2_agent.py`` appends the updates through
``HistoryStore``) and exits; a fresh agent process on the same file is resumed with
``client.resume(session_id, replay=True)``, timed until it returns (the replay is then
reduced into the session state). Skipped while acp2's agent, client or stdio transport is
missing. Same metrics as ``sdk_client.py replay``.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

from _acp2 import agent_argv, require, size_arguments
from _common import SESSION_CWD, emit_result, maxrss_kib, rss_kib, self_stats

NEEDS = ("acp2.agent", "acp2.client", "acp2.transport.stdio")
SESSION_ID = "sess_bench_replay"


async def measure(args: argparse.Namespace, store: str) -> dict[str, Any]:
    """Seed the store in one agent process, then time a replaying resume in another."""
    from acp2.client import connect

    async with connect(agent_argv(store)) as seeder:
        params = {"sessionId": SESSION_ID, "cwd": SESSION_CWD, "count": args.replay}
        await seeder.ext_request("_bench/seed", params)
    async with connect(agent_argv(store)) as client:
        rss0 = self_stats(collect=True)["rss_kib"]
        t0 = time.perf_counter()
        session = await client.resume(SESSION_ID, cwd=SESSION_CWD, replay=True)
        seconds = time.perf_counter() - t0
        growth = rss_kib() - rss0
        messages = len(session.state.messages)
    if messages != args.replay:
        raise RuntimeError(f"replayed {messages} messages, expected {args.replay}")
    return {
        "updates": args.replay,
        "seconds": seconds,
        "seconds_all_applied": seconds,
        "client_maxrss_mib": maxrss_kib() / 1024,
        "client_rss_growth_mib": growth / 1024,
    }


def main() -> None:
    """Command line: the size options of ``_acp2.size_arguments`` (the store is a file)."""
    args = size_arguments(__doc__).parse_args()
    require(*NEEDS)
    import anyio

    with tempfile.TemporaryDirectory(prefix="acp2-bench-") as tmp:
        emit_result(anyio.run(measure, args, str(Path(tmp) / "history.sqlite3")))


if __name__ == "__main__":
    main()

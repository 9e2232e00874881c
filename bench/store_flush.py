"""History store hot path: CPU time of one flush (issue 10, section 7).

Appends ``--per-flush`` small chunk bodies to one session and flushes, ``--flushes``
times, on a WAL database file; prints the best of ``--reps`` runs as CPU microseconds per
flush and per update (CPU time, so other processes on the machine disturb it less than
wall time would), and the best wall time per flush. ``--store postgresql://...`` runs it
on the PostgreSQL store instead (a database you started; its server's work shows in the
wall time only).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

BODY = (
    b'{"sessionUpdate":"agent_message_chunk","messageId":"m",'
    b'"content":{"type":"text","text":"word "}}'
)


def run(spec: str, session: str, flushes: int, per_flush: int) -> tuple[float, float]:
    """CPU and wall seconds for ``flushes`` flushes of ``per_flush`` bodies each."""
    from acp2.agent.runtime import open_store

    store = open_store(spec, "bench")
    store.create_session(session, "/tmp", [])
    start, wall = time.process_time(), time.perf_counter()
    for _ in range(flushes):
        for _ in range(per_flush):
            store.append(session, BODY)
        store.flush()
    spent, wall = time.process_time() - start, time.perf_counter() - wall
    store.close()
    return spent, wall


def main() -> None:
    """Command line: ``--flushes N --per-flush M --reps R``; prints one JSON object."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--flushes", type=int, default=5000)
    parser.add_argument("--per-flush", type=int, default=16)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--store", metavar="URL", help="a postgresql:// database to use")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="acp2-bench-flush-") as tmp:
        specs = [args.store or str(Path(tmp) / f"h{i}.sqlite3") for i in range(args.reps)]
        runs = [
            run(spec, f"s{i}-{time.time_ns()}", args.flushes, args.per_flush)
            for i, spec in enumerate(specs)
        ]
    per_flush = min(cpu for cpu, _ in runs) / args.flushes * 1e6
    result = {
        "cpu_us_per_flush": round(per_flush, 1),
        "cpu_us_per_update": round(per_flush / args.per_flush, 2),
        "wall_us_per_flush": round(min(wall for _, wall in runs) / args.flushes * 1e6, 1),
    }
    json.dump(result, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()

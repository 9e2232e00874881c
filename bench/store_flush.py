"""History store hot path: CPU time of one flush (issue 10, section 7).

Appends ``--per-flush`` small chunk bodies to one session and flushes, ``--flushes``
times, on a WAL database file; prints the best of ``--reps`` runs as CPU microseconds per
flush and per update (CPU time, so other processes on the machine disturb it less than
wall time would).
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


def run(path: Path, flushes: int, per_flush: int) -> float:
    """CPU seconds for ``flushes`` flushes of ``per_flush`` bodies each."""
    from acp2.agent import HistoryStore

    store = HistoryStore(path)
    store.create_session("s", "/tmp", [])
    start = time.process_time()
    for _ in range(flushes):
        for _ in range(per_flush):
            store.append("s", BODY)
        store.flush()
    spent = time.process_time() - start
    store.close()
    return spent


def main() -> None:
    """Command line: ``--flushes N --per-flush M --reps R``; prints one JSON object."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--flushes", type=int, default=5000)
    parser.add_argument("--per-flush", type=int, default=16)
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="acp2-bench-flush-") as tmp:
        best = min(
            run(Path(tmp) / f"h{i}.sqlite3", args.flushes, args.per_flush) for i in range(args.reps)
        )
    per_flush = best / args.flushes * 1e6
    result = {
        "cpu_us_per_flush": round(per_flush, 1),
        "cpu_us_per_update": round(per_flush / args.per_flush, 2),
    }
    json.dump(result, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()

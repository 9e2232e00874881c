"""Helpers shared by every Python benchmark peer (standard library only).

The peers run under two interpreters -- the project venv (acp2, the raw baselines) and a
separate venv holding the official Python SDK -- so this module imports nothing outside the
standard library. It defines the workload all implementations share (prompt text, chunk
text, session cwd), the self-measurement each process reports (CPU seconds, peak and
current RSS), and the one-line result format ``run.py`` reads from a scenario's stdout.

The bench peer contract (every agent under test implements it, acp2's included):

* ``session/prompt`` whose first text block is ``"stream N"`` streams N
  ``agent_message_chunk`` updates (text :func:`chunk_text`) for one agent message, then
  ends the turn (v2: ``user_message`` + ``state_update running`` first, ``state_update
  idle end_turn`` last; v1: the response with ``stopReason: end_turn``).
* ``_bench/ping`` answers ``{}`` at once.
* ``_bench/stats {"gc": bool}`` answers :func:`self_stats` of the agent process.
* ``_bench/seed {"sessionId", "count"}`` stores a ``count``-update conversation for the
  session so that a later resume (v2 ``replayFrom: {type: "start"}``, v1 ``session/load``)
  replays it before answering.
"""

from __future__ import annotations

import gc
import json
import os
import resource
import statistics
import sys
from collections.abc import Sequence
from typing import Any

#: Line prefix of the one result line a scenario script prints on stdout.
RESULT_PREFIX = "BENCH-RESULT "
#: Line prefix of the line a scenario script prints when it cannot run (then exits 0).
SKIP_PREFIX = "BENCH-SKIP "

#: Working directory sent with ``session/new`` (any absolute path; nothing touches it).
SESSION_CWD = "/tmp"
#: Session id used by peers that need a fixed one (the raw baseline).
BENCH_SESSION_ID = "sess_bench_0001"


def chunk_text(i: int) -> str:
    """Return the text of streamed chunk ``i`` (a short token, like a model's output)."""
    return f"tok{i} "


def stream_prompt(n: int) -> str:
    """Return the prompt text that asks a bench agent for ``n`` streamed chunks."""
    return f"stream {n}"


def parse_stream_prompt(text: str) -> int:
    """Return N from a ``"stream N"`` prompt text; any other text means 0 chunks."""
    words = text.split()
    if len(words) == 2 and words[0] == "stream" and words[1].isdigit():
        return int(words[1])
    return 0


def cpu_seconds() -> float:
    """Return the user + system CPU seconds this process has used so far."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def maxrss_kib() -> int:
    """Return this process's peak resident set size in KiB."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak // 1024 if sys.platform == "darwin" else peak


def rss_kib() -> int:
    """Return this process's current resident set size in KiB (peak RSS if unknown)."""
    try:
        with open("/proc/self/statm", "rb") as f:
            pages = int(f.read().split()[1])
    except (OSError, ValueError, IndexError):
        return maxrss_kib()
    return pages * os.sysconf("SC_PAGE_SIZE") // 1024


def self_stats(collect: bool = False) -> dict[str, float]:
    """Return this process's ``cpu_s``, ``maxrss_kib`` and ``rss_kib`` (after a GC if asked)."""
    if collect:
        gc.collect()
    return {"cpu_s": cpu_seconds(), "maxrss_kib": maxrss_kib(), "rss_kib": rss_kib()}


def trace_start() -> None:
    """Start tracing Python allocations (:mod:`tracemalloc`) and keep a first snapshot."""
    import tracemalloc

    gc.collect()
    tracemalloc.start(1)
    _TRACE.append(tracemalloc.take_snapshot())


def trace_report(count: int, top: int = 8) -> dict[str, Any]:
    """Stop tracing; return the Python heap growth since :func:`trace_start` per one of
    ``count`` objects (``bytes_per``) and the ``top`` allocation sites that grew most
    (``sites``: ``[file:line, bytes per object]``)."""
    import tracemalloc

    gc.collect()
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    before = _TRACE.pop()
    diff = after.compare_to(before, "lineno")
    grown = sum(d.size_diff for d in diff)
    sites = [[_site(d.traceback[0]), d.size_diff / count] for d in diff[:top]]
    return {"bytes_per": grown / count, "sites": sites}


_TRACE: list[Any] = []


def _site(frame: Any) -> str:
    """``package/module.py:line: source`` of a traced frame."""
    import linecache

    where = "/".join(frame.filename.rsplit("/", 2)[-2:])
    return f"{where}:{frame.lineno}: {linecache.getline(frame.filename, frame.lineno).strip()}"


def percentile(values: Sequence[float], q: float) -> float:
    """Return the ``q``-th percentile (0-100) of ``values`` by the nearest-rank method."""
    ordered = sorted(values)
    if not ordered:
        raise ValueError("percentile of no values")
    rank = max(1, min(len(ordered), round(q / 100 * len(ordered) + 0.5)))
    return ordered[rank - 1]


def median(values: Sequence[float]) -> float:
    """Return the median of ``values``."""
    return statistics.median(values)


def error_summary(text: str, fallback_lines: int = 3) -> str:
    """Return the most telling line of a failed process's stderr (its final exception).

    Tracebacks of exception groups end in box-drawing lines; the last line that looks like
    ``SomeError: message`` is chosen, else the last ``fallback_lines`` non-blank lines.
    """
    lines = [line.strip(" |+-\t") for line in text.splitlines()]
    lines = [line for line in lines if line]
    for line in reversed(lines):
        head, sep, _ = line.partition(": ")
        name = head.replace(".", "").replace("_", "")
        if sep and name.isalnum() and (head[0].isupper() or "." in head):
            return line
    return " | ".join(lines[-fallback_lines:]) if lines else "no output"


def emit_result(metrics: dict[str, Any]) -> None:
    """Print the scenario's metrics as the one result line ``run.py`` reads."""
    sys.stdout.write(RESULT_PREFIX + json.dumps(metrics, sort_keys=True) + "\n")
    sys.stdout.flush()


def emit_skip(reason: str) -> None:
    """Print why the scenario cannot run here; ``run.py`` shows it as n/a."""
    sys.stdout.write(SKIP_PREFIX + reason.replace("\n", " ") + "\n")
    sys.stdout.flush()


def stream_metrics(
    n: int, seconds: float, client: dict[str, float], agent: dict[str, float]
) -> dict[str, float]:
    """Build the stream scenario's metrics from the window and both sides' CPU/RSS deltas.

    ``client`` and ``agent`` hold ``cpu_s`` (CPU used inside the measured window) and
    ``maxrss_kib`` (the process's peak RSS).
    """
    return {
        "updates": n,
        "seconds": seconds,
        "updates_per_s": n / seconds if seconds > 0 else 0.0,
        "client_cpu_us_per_update": client["cpu_s"] * 1e6 / n,
        "agent_cpu_us_per_update": agent["cpu_s"] * 1e6 / n,
        "client_maxrss_mib": client["maxrss_kib"] / 1024,
        "agent_maxrss_mib": agent["maxrss_kib"] / 1024,
    }


def latency_metrics(prefix: str, samples_s: Sequence[float]) -> dict[str, float]:
    """Return ``{prefix}_p50_us`` and ``{prefix}_p99_us`` of latency samples in seconds."""
    return {
        f"{prefix}_p50_us": percentile(samples_s, 50) * 1e6,
        f"{prefix}_p99_us": percentile(samples_s, 99) * 1e6,
        f"{prefix}_count": float(len(samples_s)),
    }

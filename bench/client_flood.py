"""A flooding agent against a slow consumer: client RSS for the API, ``acp2 run`` and chat.

Run: ``.venv/bin/python bench/client_flood.py [--mode api|run|chat|all] [--seconds 30]
[--scenario stream|flood] [--stall 5]``. The agent is ``acp2 test-agent`` over stdio;
``stream`` sends chunks of one message, ``flood`` interleaves a message chunk, a thought
chunk, a tool-call patch and a terminal chunk (see ``acp2 test-agent --help``). Each mode
asks for far more updates than fit in ``--seconds`` and cancels the work after that long.

* ``api``: this process is the client. Its consumer does not iterate the work for
  ``--stall`` seconds, then iterates it slowly (``--per-item`` seconds per item).
* ``run`` / ``chat``: ``acp2 run`` / ``acp2 chat --plain`` run as subprocesses whose stdout
  pipe is read slowly; their RSS is sampled from ``/proc``.

Prints, per mode, RSS (MB) before the prompt, the peak during the flood and the end; and
the number of updates the agent had sent (from the client's state) when it was cancelled.
"""

from __future__ import annotations

import argparse
import gc
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

BIG = 100_000_000


def rss_mb(pid: int | str = "self", field: str = "VmRSS") -> float:
    """``field`` of ``/proc/<pid>/status`` in MB (0.0 once the process is gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def acp2_argv() -> list[str]:
    """The ``acp2`` command of this interpreter."""
    return [sys.executable, "-m", "acp2"]


async def _consume(work: Any, stall: float, per_item: float, count: list[int]) -> None:
    import anyio

    await anyio.sleep(stall)
    async for _update in work:
        count[0] += 1
        if per_item:
            await anyio.sleep(per_item)


async def api(args: argparse.Namespace) -> dict[str, Any]:
    """This process as the client; cancel after ``args.seconds``."""
    import anyio

    from acp2.client import connect

    async with connect([*acp2_argv(), "test-agent"]) as client:
        session = await client.new_session("/tmp")
        gc.collect()
        before = rss_mb()
        work = await session.prompt(f"{args.scenario} {BIG}")
        peak = 0.0
        items = [0]
        async with anyio.create_task_group() as group:
            group.start_soon(_consume, work, args.stall, args.per_item, items)
            deadline = time.monotonic() + args.seconds
            while time.monotonic() < deadline:
                await anyio.sleep(0.25)
                peak = max(peak, rss_mb())
            sent = len(session.state.agent_text())
            peak = max(peak, rss_mb())
            group.cancel_scope.cancel()
        with anyio.fail_after(60):
            await work.cancel()
        gc.collect()
        after = rss_mb()
    return {"before": before, "peak": peak, "end": after, "chars": sent, "items": items[0]}


def _slow_reader(stream: Any, stall: float, sink: list[int]) -> None:
    time.sleep(stall)
    while True:
        data = stream.read(4096)
        if not data:
            return
        sink[0] += len(data)
        time.sleep(0.001)


def subprocess_mode(args: argparse.Namespace, argv: list[str], stdin: bytes | None) -> dict:
    """Run ``argv``; sample its RSS; SIGINT it after ``args.seconds`` (``run``: SIGINT
    cancels the work); a reader thread drains its stdout slowly."""
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    if stdin is not None and proc.stdin is not None:
        proc.stdin.write(stdin)
        proc.stdin.flush()
    got = [0]
    reader = threading.Thread(target=_slow_reader, args=(proc.stdout, args.stall, got))
    reader.start()
    time.sleep(1.0)
    before = rss_mb(proc.pid)
    deadline = time.monotonic() + args.seconds
    peak = 0.0
    while time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.25)
        peak = max(peak, rss_mb(proc.pid, "VmHWM"))
    proc.send_signal(signal.SIGINT)
    if proc.stdin is not None:
        proc.stdin.close()
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    reader.join(timeout=60)
    return {"before": before, "peak": peak, "end": float("nan"), "stdout_bytes": got[0]}


def main() -> None:
    """Command line (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", default="all", choices=["api", "run", "chat", "all"])
    parser.add_argument("--scenario", default="stream", choices=["stream", "flood"])
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--stall", type=float, default=5.0)
    parser.add_argument("--per-item", type=float, default=0.001)
    args = parser.parse_args()
    agent = [*acp2_argv(), "test-agent"]
    prompt = f"{args.scenario} {BIG}"
    modes = ["api", "run", "chat"] if args.mode == "all" else [args.mode]
    for mode in modes:
        if mode == "api":
            import anyio

            result = anyio.run(api, args)
        elif mode == "run":
            argv = [*acp2_argv(), "run", prompt, "--", *agent]
            result = subprocess_mode(args, argv, None)
        else:
            argv = [*acp2_argv(), "chat", "--plain", "--permission", "allow", "--", *agent]
            result = subprocess_mode(args, argv, (prompt + "\n").encode())
        figures = " ".join(
            f"{k}={v:.1f}MB" if isinstance(v, float) else f"{k}={v}" for k, v in result.items()
        )
        print(f"{mode} {args.scenario} {args.seconds:g}s: {figures}", flush=True)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()

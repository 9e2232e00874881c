"""Memory under hostile peers: an unread flood of requests, and one very large prompt.

Run: ``.venv/bin/python bench/hostile_memory.py [flood|large|all] [--n 200000] [--mib 60]``.

* ``flood``: a client sends ``n`` ``session/list`` requests to ``acp2 test-agent`` and does
  not read the agent's stdout for a while; prints the agent's RSS (from ``/proc``) while
  it is not read, then reads everything and reports how many answers arrived (the
  agent applies backpressure: it stops reading while its replies are unread).
* ``large``: one ``session/prompt`` whose text is ``mib`` MiB; prints the agent's peak
  RSS above its RSS just before the prompt, divided by the prompt size (amplification).

Only the Linux ``/proc`` filesystem is used for the figures; nothing here is a test.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from typing import IO, Any

AGENT = [sys.executable, "-m", "acp2", "test-agent"]
INIT = {
    "jsonrpc": "2.0",
    "id": "init",
    "method": "initialize",
    "params": {"protocolVersion": 2, "capabilities": {}, "info": {"name": "b", "version": "0"}},
}


def status_kib(pid: int, field: str) -> int:
    """Return ``field`` (``VmRSS``, ``VmHWM``) of process ``pid`` from /proc, in KiB."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def reset_peak(pid: int) -> None:
    """Reset ``VmHWM`` of ``pid`` to its current RSS (Linux >= 4.0; ignored elsewhere)."""
    try:
        with open(f"/proc/{pid}/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass


def send(stdin: IO[bytes], obj: Any) -> None:
    """Write one JSON-RPC line."""
    stdin.write(json.dumps(obj, separators=(",", ":")).encode() + b"\n")
    stdin.flush()


def read_until(stdout: IO[bytes], rid: object) -> dict[str, Any]:
    """Read lines until the response to ``rid``; return it."""
    while True:
        line = stdout.readline()
        if not line:
            raise SystemExit(f"agent closed its stdout before answering {rid!r}")
        msg = json.loads(line)
        if msg.get("id") == rid:
            return msg  # type: ignore[no-any-return]


def start_agent() -> subprocess.Popen[bytes]:
    """Start ``acp2 test-agent`` and complete ``initialize``."""
    proc = subprocess.Popen(AGENT, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdin is not None
    assert proc.stdout is not None
    send(proc.stdin, INIT)
    read_until(proc.stdout, "init")
    return proc


def new_sessions(proc: subprocess.Popen[bytes], count: int) -> None:
    """Create ``count`` sessions, so that every ``session/list`` answer is a few KiB."""
    assert proc.stdin is not None
    assert proc.stdout is not None
    for i in range(count):
        params = {"cwd": "/tmp", "mcpServers": []}
        send(
            proc.stdin,
            {"jsonrpc": "2.0", "id": f"new{i}", "method": "session/new", "params": params},
        )
        read_until(proc.stdout, f"new{i}")


def flood(n: int, unread_seconds: float, sessions: int) -> dict[str, Any]:
    """The unread flood: RSS while the agent's output is not read, then the answers."""
    proc = start_agent()
    assert proc.stdin is not None
    assert proc.stdout is not None
    new_sessions(proc, sessions)
    base = status_kib(proc.pid, "VmRSS")
    line = b'{"jsonrpc":"2.0","id":%d,"method":"session/list","params":{}}\n'
    data = b"".join(line % i for i in range(n))

    def write() -> None:
        try:
            proc.stdin.write(data)  # type: ignore[union-attr]
            proc.stdin.flush()  # type: ignore[union-attr]
        except OSError:
            pass

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    peak = 0
    deadline = time.monotonic() + unread_seconds
    while time.monotonic() < deadline and proc.poll() is None:
        peak = max(peak, status_kib(proc.pid, "VmRSS"))
        time.sleep(0.1)
    answers = 0
    reading_started = time.monotonic()
    while answers < n:
        got = proc.stdout.readline()
        if not got:
            break
        answers += 1
    read_seconds = time.monotonic() - reading_started
    writer.join(5)
    proc.stdin.close()
    proc.wait(10)
    return {
        "requests": n,
        "base_rss_mb": base / 1024,
        "peak_rss_unread_mb": peak / 1024,
        "answers": answers,
        "read_seconds": round(read_seconds, 2),
        "exit": proc.returncode,
    }


def large(mib: int) -> dict[str, Any]:
    """One prompt of ``mib`` MiB: the agent's peak RSS growth over the prompt size."""
    proc = start_agent()
    assert proc.stdin is not None
    assert proc.stdout is not None
    new = {"cwd": "/tmp", "mcpServers": []}
    send(proc.stdin, {"jsonrpc": "2.0", "id": "new", "method": "session/new", "params": new})
    sid = read_until(proc.stdout, "new")["result"]["sessionId"]
    size = mib * 1024 * 1024
    prompt = [{"type": "text", "text": "stop end_turn"}, {"type": "text", "text": "x" * size}]
    params = {"sessionId": sid, "prompt": prompt}
    frame = json.dumps({"jsonrpc": "2.0", "id": "p", "method": "session/prompt", "params": params})
    payload = frame.encode() + b"\n"
    del prompt, params, frame
    time.sleep(0.3)
    base = status_kib(proc.pid, "VmRSS")
    reset_peak(proc.pid)
    proc.stdin.write(payload)
    proc.stdin.flush()
    del payload
    done = False
    while not done:
        got = proc.stdout.readline()
        if not got:
            break
        done = b'"idle"' in got
    peak = status_kib(proc.pid, "VmHWM")
    proc.stdin.close()
    proc.wait(10)
    growth = (peak - base) * 1024
    return {
        "prompt_mib": mib,
        "base_rss_mb": round(base / 1024, 1),
        "peak_rss_mb": round(peak / 1024, 1),
        "amplification": round(growth / size, 2),
        "turn_completed": done,
    }


def main() -> None:
    """Run the chosen scenarios and print one JSON line each."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("scenario", nargs="?", default="all", choices=["flood", "large", "all"])
    parser.add_argument("--n", type=int, default=200_000, help="flood: requests sent")
    parser.add_argument("--unread", type=float, default=10.0, help="flood: seconds unread")
    parser.add_argument("--sessions", type=int, default=40, help="flood: sessions listed")
    parser.add_argument("--mib", type=int, default=60, help="large: prompt size in MiB")
    args = parser.parse_args()
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    if args.scenario in ("flood", "all"):
        print(json.dumps({"flood": flood(args.n, args.unread, args.sessions)}))
    if args.scenario in ("large", "all"):
        print(json.dumps({"large": large(args.mib)}))


if __name__ == "__main__":
    main()

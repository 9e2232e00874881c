"""The raw limit: JSON-RPC ``session/update`` lines through an OS pipe, no protocol logic.

``raw_stream.py --updates N`` is the consumer and the driver: it spawns itself as the
producer (``--produce N``), which pre-builds N ``agent_message_chunk`` notification lines
(the bytes an agent sends), reports ``ready``, waits for ``go``, then writes them with
buffered writes. The consumer reads 64-256 KiB chunks, splits lines, parses each line with
orjson (or msgspec when orjson is absent) and appends the chunk text to its message, the
minimum a client must do. Both sides report the CPU they used inside the window.

A second run follows in which the producer encodes each message from a dict as it writes
it, as an agent must (``encode_updates_per_s``, information only).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

from _common import (
    BENCH_SESSION_ID,
    chunk_text,
    cpu_seconds,
    emit_result,
    maxrss_kib,
    stream_metrics,
)

WRITE_BUFFER = 64 * 1024


def update_message(i: int, message_id: str = "msg_agent_1") -> dict[str, Any]:
    """Return notification ``i`` of the stream as a JSON-RPC message dict."""
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {
            "sessionId": BENCH_SESSION_ID,
            "update": {
                "sessionUpdate": "agent_message_chunk",
                "messageId": message_id,
                "content": {"type": "text", "text": chunk_text(i)},
            },
        },
    }


def update_line(i: int) -> bytes:
    """Return notification ``i`` of the stream as one compact JSON line (with ``\\n``)."""
    return json.dumps(update_message(i), separators=(",", ":")).encode() + b"\n"


def json_loads() -> tuple[str, Callable[[bytes], Any]]:
    """Return the fastest available JSON parser for a line and its name."""
    try:
        import orjson  # type: ignore[import-not-found,unused-ignore]

        return "orjson", orjson.loads
    except ImportError:
        import msgspec

        return "msgspec", msgspec.json.Decoder().decode


def json_dumps() -> Callable[[Any], bytes]:
    """Return the fastest available compact JSON encoder."""
    try:
        import orjson  # type: ignore[import-not-found,unused-ignore]

        return orjson.dumps  # type: ignore[no-any-return,unused-ignore]
    except ImportError:
        import msgspec

        return msgspec.json.Encoder().encode


def produce(n: int, encode_each: bool) -> None:
    """Producer side: build N lines, say ready, wait for go, write them, report CPU on stderr.

    With ``encode_each`` the lines are not pre-built: each message is encoded from a dict
    when it is written, as an agent must do.
    """
    lines = [] if encode_each else [update_line(i) for i in range(n)]
    dumps = json_dumps()
    out = os.fdopen(sys.stdout.fileno(), "wb", buffering=WRITE_BUFFER, closefd=False)
    out.write(b"ready\n")
    out.flush()
    sys.stdin.buffer.readline()
    cpu0 = cpu_seconds()
    write = out.write
    if encode_each:
        for i in range(n):
            write(dumps(update_message(i)) + b"\n")
    else:
        for line in lines:
            write(line)
    out.flush()
    cpu1 = cpu_seconds()
    report = {"cpu_s": cpu1 - cpu0, "maxrss_kib": maxrss_kib()}
    sys.stderr.write(json.dumps(report) + "\n")
    sys.stderr.flush()


def consume(fd: int, n: int, read_size: int, loads: Callable[[bytes], Any]) -> int:
    """Read until ``n`` messages arrived; parse each and keep its text. Returns bytes read."""
    texts: dict[str, list[str]] = {}
    received = 0
    total = 0
    rest = b""
    while received < n:
        chunk = os.read(fd, read_size)
        if not chunk:
            raise RuntimeError(f"producer closed the pipe after {received} of {n} messages")
        total += len(chunk)
        lines = (rest + chunk).split(b"\n")
        rest = lines.pop()
        for line in lines:
            update = loads(line)["params"]["update"]
            texts.setdefault(update["messageId"], []).append(update["content"]["text"])
            received += 1
    return total


def drive(n: int, read_size: int, encode_each: bool = False) -> dict[str, Any]:
    """Spawn the producer, time N messages through the pipe, return the stream metrics."""
    name, loads = json_loads()
    extra = ["--encode-each"] if encode_each else []
    proc = subprocess.Popen(
        [sys.executable, __file__, "--produce", str(n), *extra],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdin is not None
    assert proc.stdout is not None
    assert proc.stderr is not None
    fd = proc.stdout.fileno()
    if proc.stdout.readline() != b"ready\n":
        raise RuntimeError("producer did not start: " + proc.stderr.read().decode())
    cpu0 = cpu_seconds()
    t0 = time.perf_counter()
    proc.stdin.write(b"go\n")
    proc.stdin.flush()
    consume(fd, n, read_size, loads)
    seconds = time.perf_counter() - t0
    client = {"cpu_s": cpu_seconds() - cpu0, "maxrss_kib": maxrss_kib()}
    proc.stdin.close()
    agent = json.loads(proc.stderr.read().decode().strip().splitlines()[-1])
    proc.wait()
    metrics: dict[str, Any] = stream_metrics(n, seconds, client, agent)
    metrics["parser"] = name
    metrics["read_size"] = read_size
    return metrics


def main() -> None:
    """Command line: ``--updates N`` drives a run; ``--produce N`` is the producer side."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--updates", type=int, default=100_000)
    parser.add_argument("--read-size", type=int, default=256 * 1024)
    parser.add_argument("--produce", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--encode-each", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.produce is not None:
        produce(args.produce, args.encode_each)
        return
    metrics = drive(args.updates, args.read_size)
    encoding = drive(args.updates, args.read_size, encode_each=True)
    metrics["encode_updates_per_s"] = encoding["updates_per_s"]
    metrics["encode_agent_cpu_us_per_update"] = encoding["agent_cpu_us_per_update"]
    emit_result(metrics)


if __name__ == "__main__":
    main()

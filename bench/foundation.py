"""Foundation benchmarks: the codec, and the JSON-RPC Connection over memory and stdio.

Run: ``.venv/bin/python bench/foundation.py [--n 200000]``. Prints messages per second for

* the codec: typed decode / encode of the hot ``session/update`` params with acp2's codec,
  next to ``json.loads`` / ``json.dumps`` and msgspec's untyped decode;
* a stream of ``session/update`` notifications through two :class:`acp2.rpc.Connection`
  peers over ``memory_pair()`` and over a real stdio subprocess (the peer decodes every
  params object into ``UpdateSessionNotification``);
* the raw baseline measured in the same run: the same lines written by a subprocess to an
  OS pipe and parsed by this process with msgspec, no protocol logic.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from typing import Any

import anyio
import msgspec

from acp2.rpc import Connection
from acp2.schema import UpdateSessionNotification
from acp2.schema.codec import decode, encode
from acp2.transport.memory import memory_pair
from acp2.transport.stdio import serve_stdio, spawn_agent

PARAMS: dict[str, Any] = {
    "sessionId": "sess_bench",
    "update": {
        "sessionUpdate": "agent_message_chunk",
        "messageId": "msg_1",
        "content": {"type": "text", "text": "hello world "},
    },
}
PARAMS_BYTES = json.dumps(PARAMS, separators=(",", ":")).encode()
LINE = b'{"jsonrpc":"2.0","method":"session/update","params":' + PARAMS_BYTES + b"}\n"


def rate(count: int, seconds: float) -> float:
    """Messages per second."""
    return count / seconds if seconds > 0 else float("inf")


def bench_codec(n: int) -> dict[str, float]:
    """Per-message rates of typed and untyped decoding and encoding."""
    typed = decode(PARAMS_BYTES, UpdateSessionNotification)
    out: dict[str, float] = {}
    cases = {
        "acp2 decode (typed)": lambda: decode(PARAMS_BYTES, UpdateSessionNotification),
        "acp2 encode (typed)": lambda: encode(typed),
        "msgspec decode (untyped)": lambda: msgspec.json.decode(PARAMS_BYTES),
        "json.loads": lambda: json.loads(PARAMS_BYTES),
        "json.dumps": lambda: json.dumps(PARAMS, separators=(",", ":")),
    }
    for name, fn in cases.items():
        start = time.perf_counter()
        for _ in range(n):
            fn()
        out[name] = rate(n, time.perf_counter() - start)
    return out


async def _consume(conn: Connection, n: int, done: anyio.Event) -> None:
    seen = 0

    async def on_update(params: UpdateSessionNotification) -> None:
        nonlocal seen
        seen += 1
        if seen == n:
            done.set()

    conn.on_notification("session/update", UpdateSessionNotification, on_update)


async def bench_memory(n: int) -> float:
    """Notification stream through two Connections over a memory pair."""
    left, right = memory_pair()
    done = anyio.Event()
    update = decode(PARAMS_BYTES, UpdateSessionNotification)
    async with Connection(left) as sender, Connection(right) as receiver:
        await _consume(receiver, n, done)
        start = time.perf_counter()
        for _ in range(n):
            await sender.notify("session/update", update)
        await done.wait()
        return rate(n, time.perf_counter() - start)


async def bench_stdio(n: int) -> float:
    """Notification stream from a subprocess Connection to ours, over real pipes."""
    done = anyio.Event()
    argv = [sys.executable, __file__, "--produce", str(n)]
    async with spawn_agent(argv) as proc, Connection(proc) as conn:
        await _consume(conn, n, done)
        start = time.perf_counter()
        await conn.notify("_bench/go", {})
        await done.wait()
        return rate(n, time.perf_counter() - start)


async def produce(n: int) -> None:
    """Subprocess side of :func:`bench_stdio`: stream ``n`` updates after ``_bench/go``."""
    update = decode(PARAMS_BYTES, UpdateSessionNotification)
    async with serve_stdio() as transport, Connection(transport) as conn:
        go = anyio.Event()

        async def on_go(method: str, params: Any) -> None:
            go.set()

        conn.on_unknown_notification(on_go)
        await go.wait()
        for _ in range(n):
            await conn.notify("session/update", update)
        await conn.wait_closed()


def bench_raw(n: int) -> float:
    """Raw baseline: a subprocess writes ``n`` lines to a pipe; we split and parse them."""
    code = (
        "import os,sys; line=" + repr(LINE) + "; n=" + str(n) + "; buf=line*1000; "
        "w=sys.stdout.buffer\n"
        "for _ in range(n//1000): w.write(buf)\n"
        "w.write(line*(n%1000)); w.flush()"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE)
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    parse = msgspec.json.Decoder().decode
    seen, tail = 0, b""
    start = time.perf_counter()
    while True:
        chunk = os.read(fd, 256 * 1024)
        if not chunk:
            break
        lines = (tail + chunk).split(b"\n")
        tail = lines.pop()
        for line in lines:
            parse(line)
            seen += 1
    elapsed = time.perf_counter() - start
    proc.wait()
    assert seen == n, (seen, n)
    return rate(n, elapsed)


def main() -> int:
    """Run every foundation benchmark and print one table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200_000, help="messages per measurement")
    parser.add_argument("--produce", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.produce is not None:
        anyio.run(produce, args.produce)
        return 0
    rows = [(name, value) for name, value in bench_codec(args.n).items()]
    raw = bench_raw(args.n)
    rows.append(("raw pipe + parse (baseline)", raw))
    memory = anyio.run(bench_memory, args.n)
    rows.append(("Connection over memory_pair", memory))
    stdio = anyio.run(bench_stdio, args.n)
    rows.append(("Connection over stdio", stdio))
    print(f"| benchmark (N={args.n}) | messages/s | vs raw pipe |")
    print("| --- | ---: | ---: |")
    for name, value in rows:
        print(f"| {name} | {value:,.0f} | {value / raw:.2f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""acp2 remote: ``connect_url`` (acp2's own client) against ``acp2 serve --test-agent``.

Measures, on 127.0.0.1, in fresh processes (the server is a subprocess):

* ``ws_updates_per_s`` / ``sse_updates_per_s``: one ``stream N`` prompt's updates per
  second over a durable WebSocket and over Streamable HTTP (POST + durable SSE), every
  update decoded into its model and reduced into the session state and the work's text
  (checked at the end, as ``acp2_stream.py`` does; no listener), with the
  client's and the server's CPU µs per update inside the window (``*_client_cpu_us``,
  ``*_server_cpu_us``); ``ws_plain_*`` / ``sse_plain_*``: the same over plain links
  (no durability asked for: what the TS SDK pair of ``ts_remote.py`` runs);
  ``*_client_idle_us`` / ``*_server_idle_us``: µs per update each process's event-loop
  thread was neither on a CPU nor waiting for one (``/proc/<pid>/schedstat``): time it had
  nothing to do, i.e. waited for the other side. Near zero for the slower side of a link
  that pipelines; both sides idle at once would mean the link serialises them (left out
  where the kernel keeps no schedstat);
* ``reconnect_p50_ms``: a small TCP proxy in front of the server cuts the connection
  (RST both ways); the time from the cut until a prompt sent right after it is answered,
  p50 over ``--runs`` cuts per profile (the prompt alone is ``prompt_p50_ms``, so the
  difference is what the reconnect and resume cost);
* ``idle_conn_kib``: the server's RSS growth per idle WebSocket connection (initialized,
  one session), ``--sessions`` connections (at most 200).

Prints the one result line ``run.py`` reads. Compare within one run (the machine is
shared): ratios, not absolutes.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import socket
import statistics
import struct
import sys
import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

from _acp2 import size_arguments
from _common import SESSION_CWD, emit_result, emit_skip
from _remote import cpu_s, rss_kib, serving


class Proxy:
    """A TCP proxy to ``port`` whose :meth:`cut` resets every open connection."""

    def __init__(self, port: int) -> None:
        self.target = port
        self.port = 0
        self._writers: set[asyncio.StreamWriter] = set()

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Pipe one client connection to the target both ways."""
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target)
        self._writers |= {writer, up_writer}
        # Cancelled when the proxy closes: end quietly, or asyncio (3.11) logs the
        # cancellation of this connection callback as an error.
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.gather(self._pipe(reader, up_writer), self._pipe(up_reader, writer))

    async def _pipe(self, source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
        with contextlib.suppress(OSError, ConnectionError):
            while data := await source.read(65536):
                sink.write(data)
                await sink.drain()
        sink.transport.abort()
        self._writers.discard(sink)

    def cut(self) -> None:
        """Abort every open connection with a reset."""
        for writer in list(self._writers):
            sock = writer.get_extra_info("socket")
            if sock is not None:
                with contextlib.suppress(OSError):
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            writer.transport.abort()
        self._writers.clear()


@asynccontextmanager
async def proxied(port: int) -> AsyncIterator[Proxy]:
    """Run a :class:`Proxy` in front of ``port`` for the block."""
    proxy = Proxy(port)
    server = await asyncio.start_server(proxy.handle, "127.0.0.1", 0)
    proxy.port = server.sockets[0].getsockname()[1]
    try:
        yield proxy
    finally:
        server.close()
        proxy.cut()


def busy_s(pid: int) -> float | None:
    """Seconds the main thread of ``pid`` has been on a CPU or runnable and waiting for
    one (``/proc/<pid>/schedstat``: run time + run-queue wait), or None without it."""
    try:
        with open(f"/proc/{pid}/schedstat") as stat:
            ran, waited = stat.read().split()[:2]
    except (OSError, ValueError):
        return None
    return (int(ran) + int(waited)) / 1e9


def idle_us(busy: float, seconds: float, updates: int) -> float:
    """µs per update of ``seconds`` that were neither run nor run-queue wait (``busy``:
    the growth of :func:`busy_s` over the window)."""
    return max(0.0, seconds - busy) / updates * 1e6


def _client(port: int, profile: str, durable: bool = True) -> Any:
    from acp2.client import connect_url
    from acp2.transport.backoff import Backoff

    backoff = Backoff(initial=0.005, max_delay=0.05, max_attempts=100, max_elapsed=30)
    url = f"http://127.0.0.1:{port}/acp"
    return connect_url(url, transport=profile, cwd=SESSION_CWD, reconnect=backoff, durable=durable)


async def throughput(
    port: int, pid: int, profile: str, updates: int, durable: bool = True
) -> dict[str, float]:
    """One ``stream N`` prompt over ``profile``: updates/s, client and server CPU µs per
    update (this process's own CPU; the server's from ``/proc``), inside the window, and
    how long each side's event loop was idle per update (when the kernel says)."""
    async with _client(port, profile, durable) as client:
        session = await client.new_session()
        await (await session.prompt("stream 10")).wait()
        # Collect the garbage of what ran before (e.g. the idle connections' clients) now:
        # otherwise a full collection of it lands in whichever stream runs first (measured:
        # 0.1-0.2 s in the first 100,000-update window, 1-2 µs per update of its client).
        gc.collect()
        me = os.getpid()
        busy0 = busy_s(me), busy_s(pid)
        server0, own0, t0 = cpu_s(pid), time.process_time(), time.perf_counter()
        work = await session.prompt(f"stream {updates}")
        stop = await work.wait()
        seconds = time.perf_counter() - t0
        own, server = time.process_time() - own0, cpu_s(pid) - server0
        busy1 = busy_s(me), busy_s(pid)
    # The test agent's chunks are "0 ", "1 ", ...: every one reduced into the work's text.
    expected = sum(len(f"{i} ") for i in range(updates))
    if stop != "end_turn" or len(work.text) != expected:
        raise RuntimeError(f"stream ended {stop!r} with {len(work.text)} of {expected} chars")
    found = {
        "updates_per_s": updates / seconds,
        "client_cpu_us": own / updates * 1e6,
        "server_cpu_us": server / updates * 1e6,
    }
    for side, before, after in zip(("client", "server"), busy0, busy1, strict=True):
        if before is not None and after is not None:
            found[f"{side}_idle_us"] = idle_us(after - before, seconds, updates)
    return found


async def reconnects(port: int, profile: str, runs: int) -> tuple[float, float]:
    """(p50 ms from a cut to the next prompt's answer, p50 ms of a prompt alone)."""
    cut_ms: list[float] = []
    plain_ms: list[float] = []
    async with proxied(port) as proxy, _client(proxy.port, profile) as client:
        session = await client.new_session()
        for _ in range(runs):
            t0 = time.perf_counter()
            await (await session.prompt("echo hi")).wait()
            plain_ms.append((time.perf_counter() - t0) * 1e3)
            t0 = time.perf_counter()
            proxy.cut()
            await (await session.prompt("echo hi")).wait()
            cut_ms.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(cut_ms), statistics.median(plain_ms)


async def idle_connections(port: int, pid: int, count: int) -> float:
    """The server's RSS growth in KiB per idle WebSocket connection with one session."""
    async with AsyncExitStack() as stack:
        first = await stack.enter_async_context(_client(port, "websocket"))
        await first.new_session()
        await asyncio.sleep(0.2)
        before = rss_kib(pid)
        for _ in range(count):
            client = await stack.enter_async_context(_client(port, "websocket"))
            await client.new_session()
        await asyncio.sleep(0.2)
        return (rss_kib(pid) - before) / count


async def measure(updates: int, runs: int, idle: int) -> dict[str, float]:
    """Every remote metric against one server."""
    argv = [sys.executable, "-m", "acp2", "serve", "--test-agent", "--no-token", "--port", "0"]
    # Every connection here is the one local principal: room for the idle ones measured.
    argv += ["--max-per-principal", str(idle + 16)]
    with serving(argv) as (url, pid):
        port = int(url.rsplit(":", 1)[1].split("/", 1)[0])
        # Idle memory first: after a long stream the server's heap shrinks back and
        # would hide what the connections cost.
        metrics = {"idle_conn_kib": await idle_connections(port, pid, idle)}
        for profile, key in (("websocket", "ws"), ("http", "sse")):
            for durable, suffix in ((True, ""), (False, "_plain")):
                found = await throughput(port, pid, profile, updates, durable)
                metrics.update({f"{key}{suffix}_{k}": v for k, v in found.items()})
            cut, plain = await reconnects(port, profile, runs)
            metrics[f"{key}_reconnect_p50_ms"] = cut
            metrics[f"{key}_prompt_p50_ms"] = plain
        return metrics


def main() -> int:
    """Run the remote scenario and print its result line."""
    args = size_arguments(__doc__).parse_args()
    try:
        import httpx  # noqa: F401
        import websockets  # noqa: F401

        import acp2.serve  # noqa: F401  (only to know it is installed)
    except ImportError as exc:
        emit_skip(f"acp2 serve / connect_url need the server and remote extras ({exc})")
        return 0
    runs = max(5, args.runs * 4)
    metrics = asyncio.run(measure(args.updates, runs, min(args.sessions, 200)))
    emit_result(metrics)
    return 0


if __name__ == "__main__":
    sys.exit(main())

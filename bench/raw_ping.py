"""The round-trip floor: a raw asyncio JSON-RPC ping-pong over a child's stdio pipes.

``raw_ping.py --pings M`` spawns itself as an echo peer (``--serve``) with
``loop.subprocess_exec``. Both sides use asyncio's pipe transports at their defaults (the
read size included), split lines and parse each with orjson (or msgspec). The driver
sends one ``_bench/ping`` request at a time and times each until its response is parsed.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from collections.abc import Callable
from typing import Any

from _common import emit_result, latency_metrics
from raw_stream import json_dumps, json_loads


class LineProtocol(asyncio.Protocol):
    """Split incoming bytes into lines and hand each parsed message to ``on_message``."""

    def __init__(
        self,
        on_message: Callable[[Any, asyncio.WriteTransport], None],
        writer: asyncio.WriteTransport,
    ) -> None:
        self._on_message = on_message
        self._writer = writer
        self._loads = json_loads()[1]
        self._rest = b""
        self.closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def data_received(self, data: bytes) -> None:
        """Parse every complete line in ``data``."""
        lines = (self._rest + data).split(b"\n")
        self._rest = lines.pop()
        for line in lines:
            self._on_message(self._loads(line), self._writer)

    def connection_lost(self, exc: Exception | None) -> None:
        """Mark the stream closed."""
        if not self.closed.done():
            self.closed.set_result(None)


async def pipe_pair(
    read_file: Any, write_file: Any, on_message: Callable[[Any, asyncio.WriteTransport], None]
) -> tuple[LineProtocol, asyncio.WriteTransport]:
    """Connect ``write_file`` then ``read_file`` to the running loop as pipe transports.

    ``on_message(message, writer)`` is called for every parsed incoming line.
    """
    loop = asyncio.get_running_loop()
    writer, _ = await loop.connect_write_pipe(asyncio.Protocol, write_file)
    _, protocol = await loop.connect_read_pipe(lambda: LineProtocol(on_message, writer), read_file)
    return protocol, writer


async def serve() -> None:
    """Echo peer: answer every request line with an empty result."""
    dumps = json_dumps()

    def on_message(message: Any, writer: asyncio.WriteTransport) -> None:
        writer.write(dumps({"jsonrpc": "2.0", "id": message["id"], "result": {}}) + b"\n")

    stdin = os.fdopen(sys.stdin.fileno(), "rb", buffering=0, closefd=False)
    stdout = os.fdopen(sys.stdout.fileno(), "wb", buffering=0, closefd=False)
    protocol, _ = await pipe_pair(stdin, stdout, on_message)
    await protocol.closed


class PingClient(asyncio.SubprocessProtocol):
    """The driver's side of the child's pipes: resolves ``waiter`` with each response."""

    def __init__(self) -> None:
        self._loads = json_loads()[1]
        self._rest = b""
        self.waiter: asyncio.Future[Any] | None = None
        self.exited: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        """Parse the echo peer's stdout lines; wake the waiting ping."""
        lines = (self._rest + data).split(b"\n")
        self._rest = lines.pop()
        for line in lines:
            message = self._loads(line)
            if self.waiter is not None and not self.waiter.done():
                self.waiter.set_result(message)

    def process_exited(self) -> None:
        """Mark the echo peer gone."""
        if not self.exited.done():
            self.exited.set_result(None)


async def drive(pings: int, warmup: int) -> dict[str, Any]:
    """Spawn the echo peer and time ``pings`` sequential requests after ``warmup`` ones."""
    dumps = json_dumps()
    loop = asyncio.get_running_loop()
    transport, client = await loop.subprocess_exec(
        PingClient, sys.executable, __file__, "--serve", stderr=None
    )
    stdin = transport.get_pipe_transport(0)
    assert isinstance(stdin, asyncio.WriteTransport)
    samples: list[float] = []
    for i in range(warmup + pings):
        client.waiter = loop.create_future()
        line = dumps({"jsonrpc": "2.0", "id": i, "method": "_bench/ping", "params": {}})
        t0 = time.perf_counter()
        stdin.write(line + b"\n")
        await client.waiter
        if i >= warmup:
            samples.append(time.perf_counter() - t0)
    stdin.close()
    await client.exited
    transport.close()
    return latency_metrics("ping", samples)


def main() -> None:
    """Command line: ``--pings M`` drives a run; ``--serve`` is the echo peer."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pings", type=int, default=5000)
    parser.add_argument("--warmup", type=int, default=200)
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        asyncio.run(serve())
        return
    emit_result(asyncio.run(drive(args.pings, args.warmup)))


if __name__ == "__main__":
    main()

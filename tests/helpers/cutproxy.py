"""A TCP proxy on 127.0.0.1 that cuts its connections on demand, for fault tests.

    async with cut_proxy(target_port) as proxy:
        ...connect to proxy.port...
        proxy.cut()            # abort every open connection (RST), both sides

``forwarded`` counts the bytes passed from the target back to clients, so a test can cut
at random points of a stream; ``cuts`` counts the cuts that hit at least one connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager


class CutProxy:
    """The running proxy (see the module docstring)."""

    def __init__(self, target_port: int, chunk: int = 65536) -> None:
        self.target_port = target_port
        #: The most bytes read (and counted) at once: a cut lands at most this far past
        #: the byte count its caller waited for.
        self.chunk = chunk
        self.port = 0
        self.forwarded = 0
        self.cuts = 0
        self.accepted = 0
        self._pairs: set[tuple[asyncio.StreamWriter, asyncio.StreamWriter]] = set()
        self._progress = asyncio.Event()

    async def forwarded_at_least(self, total: int) -> None:
        """Wait until ``forwarded`` reaches ``total`` (the caller bounds the wait)."""
        while self.forwarded < total:
            self._progress.clear()
            await self._progress.wait()

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Connect to the target and pipe both ways until either side ends or a cut."""
        self.accepted += 1
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        except OSError:
            writer.transport.abort()
            return
        pair = (writer, up_writer)
        self._pairs.add(pair)
        try:
            await asyncio.gather(
                self._pipe(reader, up_writer, count=False),
                self._pipe(up_reader, writer, count=True),
            )
        finally:
            self._pairs.discard(pair)
            for end in pair:
                end.transport.abort()

    async def _pipe(
        self, source: asyncio.StreamReader, sink: asyncio.StreamWriter, *, count: bool
    ) -> None:
        with contextlib.suppress(OSError, ConnectionError):
            while data := await source.read(self.chunk):
                if count:
                    self.forwarded += len(data)
                    self._progress.set()
                sink.write(data)
                await sink.drain()
        sink.transport.abort()

    def cut(self) -> int:
        """Abort every open connection with a reset; return how many were cut."""
        found = self._abort_all()
        if found:
            self.cuts += 1
        return found

    def _abort_all(self) -> int:
        pairs = list(self._pairs)
        self._pairs.clear()
        for pair in pairs:
            for end in pair:
                sock = end.get_extra_info("socket")
                if sock is not None:
                    with contextlib.suppress(OSError):
                        sock.setsockopt(
                            socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
                        )
                end.transport.abort()
        return len(pairs)


@asynccontextmanager
async def cut_proxy(target_port: int, chunk: int = 65536) -> AsyncIterator[CutProxy]:
    """Run a :class:`CutProxy` in front of ``127.0.0.1:target_port`` until the block ends
    (``chunk``: see :attr:`CutProxy.chunk`)."""
    proxy = CutProxy(target_port, chunk)
    server = await asyncio.start_server(proxy.handle, "127.0.0.1", 0)
    proxy.port = server.sockets[0].getsockname()[1]
    try:
        yield proxy
    finally:
        server.close()
        proxy._abort_all()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(server.wait_closed(), 1.0)

"""An in-memory transport pair with the direct paths: no task switch per message.

:func:`direct_pair` returns two linked ends, like :func:`acp2.transport.memory.memory_pair`
(bytes in order, chunk for chunk; closing one end ends the other's stream after what it
already sent, and makes its sends raise :class:`~acp2.errors.ConnectionClosed`), that
also implement :class:`~acp2.transport.base.DirectSend` and
:class:`~acp2.transport.base.DirectReceive`. A :class:`~acp2.rpc.Connection` on each end
then writes a frame in the step that queues it and the other end handles it in one
loop callback -- what the stdio transport gives, without the pipe. The bridges run their
in-process hop on it (``docs/benchmarks.md``, "The bridges").

Delivery is never synchronous: a chunk sent is handed to the other end's ``consume`` in
a callback of the next loop pass (all chunks waiting by then in one go), so a handler
never runs inside the sender's write. Each direction holds at most ``limit`` unread
bytes: past it ``send_nowait`` takes nothing and ``send`` waits, which is the
backpressure a pipe gives.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from typing import Final

from acp2.errors import ConnectionClosed

__all__ = ["DirectTransport", "direct_pair"]

#: Unread bytes each direction holds before senders wait (the size of the pipes
#: ``spawn_agent`` asks for).
DEFAULT_LIMIT: Final = 1024 * 1024


class _Pipe:
    """One direction: the chunks sent and not yet read, and who waits on them."""

    __slots__ = ("chunks", "closed", "consumer", "limit", "reader", "scheduled", "size", "writers")

    def __init__(self, limit: int) -> None:
        self.chunks: deque[bytes] = deque()
        self.size = 0
        self.limit = limit
        self.closed = False
        #: The reader's waiter: resolved with True (``consume`` asked to stop), False (end).
        self.reader: asyncio.Future[bool] | None = None
        self.consumer: Callable[[bytes], bool] | None = None
        self.scheduled = False
        self.writers: list[asyncio.Future[None]] = []

    def put(self, data: bytes) -> None:
        self.chunks.append(data)
        self.size += len(data)
        self._wake_reader()

    def take(self) -> bytes:
        data = self.chunks.popleft()
        self.size -= len(data)
        if self.writers and self.size < self.limit:
            self._wake_writers()
        return data

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self._wake_reader()
            self._wake_writers()

    def _wake_writers(self) -> None:
        writers, self.writers = self.writers, []
        for writer in writers:
            if not writer.done():
                writer.set_result(None)

    def _wake_reader(self) -> None:
        reader = self.reader
        if reader is None or reader.done():
            return
        if self.consumer is None:
            reader.set_result(True)  # ``receive`` takes the chunk itself
        elif not self.scheduled:
            self.scheduled = True
            reader.get_loop().call_soon(self.deliver)

    def deliver(self) -> None:
        """Loop callback: hand every waiting chunk to the pumping reader."""
        self.scheduled = False
        reader, consume = self.reader, self.consumer
        if reader is None or consume is None or reader.done():
            return
        while self.chunks:
            if not consume(self.take()):
                reader.set_result(True)
                return
            if reader.done():  # consume() closed us or cancelled the reader
                return
        if self.closed:
            reader.set_result(False)


class DirectTransport:
    """One end of a :func:`direct_pair` (see the module)."""

    __slots__ = ("_rx", "_tx")

    def __init__(self, tx: _Pipe, rx: _Pipe) -> None:
        self._tx = tx
        self._rx = rx

    def _check_open(self) -> _Pipe:
        tx = self._tx
        if tx.closed or self._rx.closed:
            raise ConnectionClosed("memory transport closed")
        return tx

    def send_nowait(self, data: bytes) -> int:
        """Queue all of ``data`` when this direction holds less than its limit (return
        ``len(data)``), else nothing (``0``). Raises ``ConnectionClosed`` once closed."""
        tx = self._check_open()
        if tx.size >= tx.limit:
            return 0
        if data:
            tx.put(data if type(data) is bytes else bytes(data))
        return len(data)

    async def send(self, data: bytes) -> None:
        """Queue ``data``; waits while this direction is at its limit. Raises
        ``ConnectionClosed`` when either end is closed."""
        tx = self._check_open()
        while tx.size >= tx.limit:
            waiter = asyncio.get_running_loop().create_future()
            tx.writers.append(waiter)
            await waiter
            tx = self._check_open()
        if data:
            tx.put(bytes(data))

    async def receive(self) -> bytes:
        """The next chunk the other end sent; ``b""`` once it closed (or we did)."""
        rx = self._rx
        while not rx.chunks:
            if rx.closed:
                return b""
            await self._wait(rx, None)
        return rx.take()

    async def pump(self, consume: Callable[[bytes], bool]) -> bool:
        """Hand every chunk to ``consume`` (in a loop callback once none is waiting) until
        it returns False (then True) or the stream ends (False)."""
        rx = self._rx
        while rx.chunks:
            if not consume(rx.take()):
                return True
        if rx.closed:
            return False
        return await self._wait(rx, consume)

    @staticmethod
    async def _wait(rx: _Pipe, consume: Callable[[bytes], bool] | None) -> bool:
        rx.reader = asyncio.get_running_loop().create_future()
        rx.consumer = consume
        try:
            return await rx.reader
        finally:
            rx.reader = None
            rx.consumer = None

    async def aclose(self) -> None:
        """Close this end; the other end reads what was sent, then the end. Idempotent."""
        self._tx.close()
        self._rx.close()
        self._rx.chunks.clear()
        self._rx.size = 0


def direct_pair(limit: int = DEFAULT_LIMIT) -> tuple[DirectTransport, DirectTransport]:
    """Two linked ends ``(a, b)``: ``a`` sends to ``b`` and back (see the module)."""
    one, two = _Pipe(limit), _Pipe(limit)
    return DirectTransport(one, two), DirectTransport(two, one)

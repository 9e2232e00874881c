"""In-memory transport pairs, for tests and for running an agent and a client in one process.

``memory_pair()`` returns two linked :class:`~acp2.transport.base.Transport` ends:
bytes sent on one are received on the other, in order, chunk for chunk. Closing one end
ends the other's stream (``receive`` returns ``b""``) and makes its ``send`` raise
:class:`~acp2.errors.ConnectionClosed`.

``direct_pair()`` (:mod:`acp2.transport.direct`) is the same contract with the direct
paths of :mod:`acp2.transport.base` as well, for the bridges' in-process hops.
"""

from __future__ import annotations

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from acp2.errors import ConnectionClosed

__all__ = ["MemoryTransport", "memory_pair"]


class MemoryTransport:
    """One end of an in-memory pair (see :func:`memory_pair`)."""

    __slots__ = ("_closed", "_rx", "_tx")

    def __init__(
        self, tx: MemoryObjectSendStream[bytes], rx: MemoryObjectReceiveStream[bytes]
    ) -> None:
        self._tx = tx
        self._rx = rx
        self._closed = False

    async def receive(self) -> bytes:
        """Return the next chunk the other end sent; ``b""`` once it closed (or we did)."""
        try:
            return await self._rx.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            return b""

    async def send(self, data: bytes) -> None:
        """Queue ``data`` for the other end; waits while its buffer is full.

        Raises :class:`ConnectionClosed` when either end is closed.
        """
        if not data:
            return
        try:
            await self._tx.send(data)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError) as exc:
            raise ConnectionClosed("memory transport closed") from exc

    async def aclose(self) -> None:
        """Close this end; the other end sees end of stream. Idempotent."""
        if self._closed:
            return
        self._closed = True
        self._tx.close()
        self._rx.close()


def memory_pair(max_buffered_chunks: int = 64) -> tuple[MemoryTransport, MemoryTransport]:
    """Return two linked transports ``(a, b)``: ``a.send`` feeds ``b.receive`` and back.

    Each direction holds at most ``max_buffered_chunks`` unread chunks before ``send``
    waits (chunks are whole coalesced writes, so this bounds memory loosely).
    """
    a_tx, b_rx = anyio.create_memory_object_stream[bytes](max_buffered_chunks)
    b_tx, a_rx = anyio.create_memory_object_stream[bytes](max_buffered_chunks)
    return MemoryTransport(a_tx, a_rx), MemoryTransport(b_tx, b_rx)

"""The Transport protocol: bytes in, bytes out.

A transport moves opaque chunks of bytes between two peers. It knows nothing about
JSON-RPC: framing (newline-delimited JSON) is done above it by :mod:`acp2.rpc`, so any
byte stream (pipes, an in-memory pair, a socket) can carry ACP.

TR-07 (custom transports keep the JSON-RPC message format and the ACP lifecycle): a
transport only has to deliver the bytes it was given, in order, and report the end of
the stream; every message-level rule is enforced once, by :class:`acp2.rpc.Connection`.
A custom transport documents how it is set up; the three here are described in their
modules (:mod:`~acp2.transport.memory`, :mod:`~acp2.transport.stdio`).
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

__all__ = ["Transport"]


@runtime_checkable
class Transport(Protocol):
    """A bidirectional byte stream.

    * :meth:`receive` returns the next chunk (any size, never empty) and ``b""`` at the
      end of the stream, and keeps returning ``b""`` afterwards (also after
      :meth:`aclose`).
    * :meth:`send` returns once the bytes are handed to the other side or the OS; it
      raises :class:`acp2.errors.ConnectionClosed` when the stream is closed or broken.
    * :meth:`aclose` is idempotent.
    """

    async def receive(self) -> bytes:
        """Return the next chunk of bytes; ``b""`` at end of stream."""
        ...

    async def send(self, data: bytes) -> None:
        """Send all of ``data``; raises ``ConnectionClosed`` if the stream is gone."""
        ...

    async def aclose(self) -> None:
        """Close both directions; calling it again does nothing."""
        ...

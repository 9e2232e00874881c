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

from collections.abc import Callable
from typing import Protocol, runtime_checkable

__all__ = ["DirectReceive", "DirectSend", "Transport"]


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


@runtime_checkable
class DirectSend(Protocol):
    """Optional: a transport that can also take bytes without waiting.

    :meth:`send_nowait` hands over as much of ``data`` as fits right now and returns
    how many bytes it took (``0`` .. ``len(data)``); the caller sends the rest later with
    :meth:`Transport.send`, after which nothing else may be sent in between. It raises
    :class:`acp2.errors.ConnectionClosed` when the stream is closed or broken.
    :class:`acp2.rpc.Connection` uses it to write a message in the same step it is
    queued when nothing else is being written (the stdio transport implements it);
    without it every write goes through the connection's writer task.
    """

    def send_nowait(self, data: bytes) -> int:
        """Send what fits now; return the number of bytes taken."""
        ...


@runtime_checkable
class DirectReceive(Protocol):
    """Optional: a transport that can hand incoming chunks to a function as they arrive.

    ``await pump(consume)`` calls ``consume(chunk)`` for every chunk, in order, possibly
    from the event loop's readiness callback rather than the awaiting task, until
    ``consume`` returns False (``pump`` then returns True: the caller has work to finish
    and calls ``pump`` again afterwards) or the stream ends (``pump`` returns False).
    ``consume`` must not raise. :class:`acp2.rpc.Connection` uses it so that a message
    needing no await is handled without waking its reader task (the stdio transport
    implements it); without it, the connection reads with :meth:`Transport.receive`.
    """

    async def pump(self, consume: Callable[[bytes], bool]) -> bool:
        """Feed chunks to ``consume`` until it returns False (True) or the stream ends."""
        ...

"""What the remote client transports share: header names, errors, message framing.

The rpc layer writes newline-delimited JSON to a transport; a remote transport sends one
message per WebSocket frame or POST, so :func:`whole_messages` cuts the written bytes
into whole messages with the rpc layer's own :class:`~acp2.rpc.framing.LineFramer`. What
a transport must know of a message (the HTTP one: which session stream a request is
scoped to) it asks :func:`acp2.rpc.envelope.read`; no transport parses JSON-RPC itself.
"""

from __future__ import annotations

import contextlib
import importlib
import sys
from types import ModuleType

import anyio

from acp2.errors import ConnectionClosed, LinkLost, RemoteRefused, ResumeRefused
from acp2.rpc.framing import LineFramer

__all__ = [
    "CONNECTION_HEADER",
    "SESSION_HEADER",
    "Inbox",
    "LinkLost",
    "RemoteRefused",
    "ResumeRefused",
    "needs",
    "outgoing_framer",
    "whole_messages",
]

CONNECTION_HEADER = "Acp-Connection-Id"
SESSION_HEADER = "Acp-Session-Id"


def needs(module: str) -> ModuleType:
    """Import ``module`` of the ``remote`` extra, or raise an ``ImportError`` that says
    how to install it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(
            f"remote connections need the {module!r} package: "
            "pip install -e '.[remote]' in the acp2 checkout"
        ) from exc


def outgoing_framer() -> LineFramer:
    """A framer for the bytes the rpc layer writes to a remote transport (no size limit:
    they are our own; the server judges their size)."""
    return LineFramer(sys.maxsize)


def whole_messages(framer: LineFramer, data: bytes) -> list[bytes]:
    """The complete, non-blank messages ``data`` ends (without their newline); a trailing
    partial line is kept by ``framer`` for the next call."""
    return [event for event in framer.feed(data) if type(event) is bytes]


class Inbox:
    """The messages a remote transport received, waiting for :meth:`take`.

    Bounded (``chunks`` items): a reader that stops reading makes :meth:`put` wait, which
    stops the transport reading its socket and so pushes back on the server. Both ends
    skip the event loop when they need not wait, and :meth:`take` hands over everything
    already queued at once, so a fast stream costs the rpc layer one read per batch
    rather than one per message.
    """

    __slots__ = ("_rx", "_tx")

    def __init__(self, chunks: int = 256) -> None:
        self._tx, self._rx = anyio.create_memory_object_stream[bytes](chunks)

    async def put(self, data: bytes) -> None:
        """Queue ``data``; waits while the inbox is full. Raises ``ConnectionClosed``
        once it was closed."""
        try:
            self._tx.send_nowait(data)
        except anyio.WouldBlock:
            await self._tx.send(data)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError) as exc:
            raise ConnectionClosed("the remote stream has ended") from exc

    async def take(self) -> bytes:
        """Everything queued (waiting for the first item); ``b""`` once closed and empty."""
        rx = self._rx
        try:
            try:
                first = rx.receive_nowait()
            except anyio.WouldBlock:
                first = await rx.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            return b""
        parts = [first]
        with contextlib.suppress(anyio.WouldBlock, anyio.EndOfStream, anyio.ClosedResourceError):
            while len(parts) < 256:
                parts.append(rx.receive_nowait())
        return b"".join(parts) if len(parts) > 1 else first

    def close(self) -> None:
        """No more items: :meth:`take` returns ``b""`` once the queued ones are taken."""
        self._tx.close()

"""What the remote client transports share: header names, errors, message framing.

The rpc layer writes newline-delimited JSON to a transport; a remote transport sends one
message per WebSocket frame or POST, so :class:`LineSplitter` cuts the written bytes into
whole messages, and :func:`peek` reads the few fields routing needs (method, id, the
``sessionId`` of params or result) without decoding the rest.
"""

from __future__ import annotations

import contextlib
import importlib
from types import ModuleType
from typing import Any

import anyio
import msgspec

from acp2.errors import ConnectionClosed, InvalidRequest, LinkLost, RemoteRefused, ResumeRefused
from acp2.rpc.guarded import decode

__all__ = [
    "CONNECTION_HEADER",
    "SESSION_HEADER",
    "Inbox",
    "LineSplitter",
    "LinkLost",
    "Peek",
    "RemoteRefused",
    "ResumeRefused",
    "has_id",
    "needs",
    "peek",
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


class LineSplitter:
    """Cuts a byte stream of newline-terminated JSON messages into whole messages."""

    __slots__ = ("_partial",)

    def __init__(self) -> None:
        self._partial = b""

    def feed(self, data: bytes) -> list[bytes]:
        """The complete, non-blank messages ``data`` ends (without their newline); a
        trailing partial line is kept for the next call."""
        if self._partial:
            data = self._partial + data
        lines = data.split(b"\n")
        self._partial = lines.pop()
        return [line for line in lines if line.strip()]


class _Sid(msgspec.Struct):
    sessionId: Any = None


_sid = msgspec.json.Decoder(_Sid)
_NONE = msgspec.Raw(b"")


class Peek(msgspec.Struct):
    """The routing fields of one JSON-RPC message; params and result stay undecoded."""

    method: Any = None
    id: Any = None
    params: msgspec.Raw = _NONE
    result: msgspec.Raw = _NONE

    @property
    def is_request(self) -> bool:
        """A request (method and id)."""
        return isinstance(self.method, str) and self.id is not None

    @property
    def is_response(self) -> bool:
        """A response (an id and no method)."""
        return self.method is None and self.id is not None

    def session_id(self) -> str | None:
        """The ``sessionId`` of the params, else of the result, when it is a string."""
        for part in (self.params, self.result):
            if len(part):
                try:
                    found = decode(_sid, part).sessionId
                except InvalidRequest:
                    continue
                if isinstance(found, str):
                    return found
        return None


_peek = msgspec.json.Decoder(Peek)


class _Id(msgspec.Struct):
    id: Any = None


_id = msgspec.json.Decoder(_Id)


def has_id(message: bytes) -> bool:
    """Whether ``message`` is a JSON object with a non-null ``id`` (a request or a
    response, the messages :func:`peek` has to route); cheaper than :func:`peek`, since
    it keeps nothing of the rest: a stream's notifications need only this."""
    try:
        return decode(_id, message).id is not None
    except InvalidRequest:
        return False


def peek(message: bytes) -> Peek:
    """The routing fields of ``message``; an empty :class:`Peek` when it is not a JSON
    object (the rpc layer of the receiving side judges it)."""
    try:
        return decode(_peek, message)
    except InvalidRequest:
        return Peek()


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

"""Peek at a client's first message to learn the protocol version it speaks.

:func:`peek_version` reads from a transport until it holds the first whole line, reads
``protocolVersion`` from an ``initialize`` request there (with
:func:`acp2.compat.v1.negotiate.request_version`, nothing else is decoded) and returns
the version with a transport that replays every byte read so far before the rest of the
stream: the connection that then serves it sees the stream exactly as sent. An
``initialize`` whose version cannot be read is answered ``-32602`` here and the next
message is peeked (the connection stays open). A request for 1 is v1, whatever else its
params carry (``acp2 check``'s version probe sends one valid under both versions, and is
answered in v1 like any v1 client). Anything that is not an ``initialize`` request goes to
the v2 path unchanged, whose rules answer it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from msgspec import UNSET, Raw

from acp2.compat.v1.negotiate import NegotiationError, Version, request_version
from acp2.errors import InvalidParams, InvalidRequest
from acp2.rpc.envelope import keys_of
from acp2.rpc.framing import DEFAULT_MAX_MESSAGE_SIZE
from acp2.rpc.messages import encode_error
from acp2.schema.methods import INITIALIZE
from acp2.transport.base import DirectReceive, DirectSend, Transport

__all__ = ["ReplayTransport", "first_line", "peek_version", "replay"]


class ReplayTransport:
    """``inner`` with ``head`` received first: the bytes a peek consumed, given back."""

    def __init__(self, inner: Transport, head: bytes) -> None:
        self.inner = inner
        self._head = head

    async def receive(self) -> bytes:
        """The peeked bytes first, then the inner transport's chunks."""
        if self._head:
            head, self._head = self._head, b""
            return head
        return await self.inner.receive()

    async def send(self, data: bytes) -> None:
        """Send on the inner transport."""
        await self.inner.send(data)

    async def aclose(self) -> None:
        """Close the inner transport (idempotent as it is)."""
        await self.inner.aclose()

    def closing_because(self, reason: str) -> None:
        """Hand ``reason`` (why the connection is given up) to the inner transport when
        it can tell its peer (a remote connection's close frame)."""
        tell = getattr(self.inner, "closing_because", None)
        if tell is not None:
            tell(reason)


class _DirectReplayTransport(ReplayTransport):
    """A :class:`ReplayTransport` that keeps the inner transport's direct paths."""

    inner: Any
    #: The inner transport's own ``send_nowait``, bound once: the outbox calls it for
    #: every write, so a forwarding method would cost a call per write.
    send_nowait: Callable[[bytes], int]

    def __init__(self, inner: Transport, head: bytes) -> None:
        super().__init__(inner, head)
        self.send_nowait = self.inner.send_nowait

    async def pump(self, consume: Callable[[bytes], bool]) -> bool:
        """Feed the peeked bytes to ``consume``, then pump the inner transport."""
        if self._head:
            head, self._head = self._head, b""
            if not consume(head):
                return True
        more: bool = await self.inner.pump(consume)
        return more


def replay(inner: Transport, head: bytes) -> ReplayTransport:
    """``inner`` with ``head`` received first, keeping its direct paths when it has them."""
    if isinstance(inner, DirectReceive) and isinstance(inner, DirectSend):
        return _DirectReplayTransport(inner, head)
    return ReplayTransport(inner, head)


async def first_line(transport: Transport, buffer: bytearray) -> bytes | None:
    """Read until ``buffer`` holds a newline; the line (without it), or ``None`` at the
    end of the stream or past the message size limit (let the v2 path judge those)."""
    while b"\n" not in buffer:
        if len(buffer) > DEFAULT_MAX_MESSAGE_SIZE:
            return None
        chunk = await transport.receive()
        if not chunk:
            return None
        buffer += chunk
    return bytes(buffer[: buffer.index(b"\n")])


def _version_of(line: bytes) -> tuple[Any, Version | NegotiationError | None]:
    """``(request id, version)`` of an ``initialize`` line; ``None`` for anything else."""
    try:
        envelope = keys_of(line)
    except InvalidRequest:
        return None, None
    if envelope.method != INITIALIZE.name or envelope.id is UNSET:
        return None, None
    params = envelope.params or Raw(b"null")
    try:
        return envelope.id, request_version(params)
    except NegotiationError as exc:
        return envelope.id, exc


async def peek_version(transport: Transport) -> tuple[Version, Transport]:
    """The version the client's ``initialize`` asks for (``2`` when there is none to
    read) and a transport that replays everything read (see the module)."""
    buffer = bytearray()
    while True:
        line = await first_line(transport, buffer)
        if line is None or not line.strip():
            return 2, replay(transport, bytes(buffer))
        rid, found = _version_of(line)
        if not isinstance(found, NegotiationError):
            return found or 2, replay(transport, bytes(buffer))
        await transport.send(encode_error(rid, InvalidParams(str(found))) + b"\n")
        del buffer[: len(line) + 1]

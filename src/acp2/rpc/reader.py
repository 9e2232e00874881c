"""The reading half of :class:`acp2.rpc.Connection`: transport -> peer -> dispatcher.

A :class:`Reader` takes what the transport delivers -- a byte stream through
``receive()``, chunks handed over in the loop's readiness callback through ``pump()``
(:class:`~acp2.transport.base.DirectReceive`), or whole messages through
``receive_message()`` (:class:`MessageReceive`) -- feeds it to the connection's
:class:`~acp2.rpc.peer.Peer` and has the :class:`~acp2.rpc.dispatch.Dispatcher` act on
the events, in order, awaiting only the ones that need it.

Backpressure on a peer that does not read: while more than ``max_unread`` bytes of our
output wait for it (responses are never held back, so a flood of requests would grow
that without bound), the reader reads nothing more; it reads on once the backlog is
down to half of that, and gives up (``on_stall(reason, outbox)``, and it is logged) if no byte
of it was taken for ``stall_timeout`` seconds.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Final, Protocol, runtime_checkable

from acp2 import _aio
from acp2.errors import ConnectionClosed
from acp2.rpc.dispatch import Dispatcher
from acp2.rpc.events import Event
from acp2.rpc.outbox import Outbox
from acp2.rpc.peer import Peer

if TYPE_CHECKING:  # an annotation only: the shell needs no transport module at run time
    from acp2.transport.base import Transport

__all__ = ["MessageReceive", "Reader"]

logger = logging.getLogger("acp2.rpc")

#: What :meth:`Reader._consume` leaves for the reader task when the peer must read first.
_PAUSE: Final = object()

#: Chunks at least this big suggest more is waiting: the reader then lets other tasks run
#: before reading on, so a peer that streams without pause cannot starve them.
_YIELD_AFTER: Final = 16 * 1024


@runtime_checkable
class MessageReceive(Protocol):
    """Optional: a transport that delivers whole messages instead of a byte stream.

    ``await receive_message()`` returns one JSON-RPC message or batch (bytes, no framing)
    and ``None`` at the end; a :class:`~acp2.rpc.Connection` over such a transport reads
    with it instead of :meth:`~acp2.transport.base.Transport.receive`.
    """

    async def receive_message(self) -> bytes | None:
        """Return the next whole message; None at the end of the conversation."""
        ...


class Reader:
    """Reads one connection's transport until the end (see the module docstring)."""

    __slots__ = (
        "_backlog",
        "_dispatcher",
        "_name",
        "_on_stall",
        "_outbox",
        "_peer",
        "_stall",
        "_transport",
    )

    def __init__(
        self,
        transport: Transport,
        peer: Peer[Any],
        dispatcher: Dispatcher,
        outbox: Outbox,
        *,
        stall_timeout: float,
        on_stall: Callable[[str, Outbox], None],
    ) -> None:
        self._transport = transport
        self._peer = peer
        self._name = peer.name
        self._dispatcher = dispatcher
        self._outbox = outbox
        self._stall = stall_timeout
        self._on_stall = on_stall
        #: What :meth:`_consume` left for the reader task: an awaitable with the events
        #: after it, the exception handling raised, or ``_PAUSE``.
        self._backlog: tuple[Awaitable[None], list[Event], int] | BaseException | object | None = (
            None
        )

    async def run(self) -> None:
        """Read and handle every message until the stream ends, breaks, or the peer
        stalls; a bug in handling is raised."""
        transport = self._transport
        if isinstance(transport, MessageReceive):
            await self._receive_messages(transport)
            return
        pump = getattr(transport, "pump", None)
        if pump is not None:
            await self._pump_until_eof(pump)
        else:
            await self._receive_until_eof()
        await self._handle(self._peer.end_of_stream(), 0)

    async def _handle(self, events: list[Event], start: int) -> None:
        """Handle ``events[start:]``, awaiting the ones that need it, in order."""
        while (stopped := self._dispatcher.run(events, start)) is not None:
            pending, start = stopped
            await pending

    async def _receive_messages(self, transport: MessageReceive) -> None:
        while True:
            try:
                message = await transport.receive_message()
            except (ConnectionClosed, OSError) as exc:
                logger.debug("%s: receive failed: %r", self._name, exc)
                return
            if message is None:
                return
            await self._handle(self._peer.receive_message(message), 0)
            if self._outbox.unread_exceeded and not await self.let_peer_read():
                return

    async def _receive_until_eof(self) -> None:
        receive = self._transport.receive
        feed = self._peer.receive_bytes
        while True:
            try:
                chunk = await receive()
            except (ConnectionClosed, OSError) as exc:
                logger.debug("%s: receive failed: %r", self._name, exc)
                return
            if not chunk:
                return
            await self._handle(feed(chunk), 0)
            if self._outbox.unread_exceeded and not await self.let_peer_read():
                return
            if len(chunk) >= _YIELD_AFTER:
                await _aio.yield_once()

    async def _pump_until_eof(self, pump: Callable[[Callable[[bytes], bool]], Any]) -> None:
        """Read through a transport that hands chunks to :meth:`_consume` directly (see
        :class:`~acp2.transport.base.DirectReceive`): this task only wakes up when a
        message needs awaiting (an async notification handler, a batch)."""
        while True:
            try:
                stopped = await pump(self._consume)
            except (ConnectionClosed, OSError) as exc:
                logger.debug("%s: receive failed: %r", self._name, exc)
                return
            backlog, self._backlog = self._backlog, None
            if backlog is None:
                if not stopped:
                    return
                continue
            if isinstance(backlog, BaseException):
                raise backlog  # a bug in dispatch: fail like the reader task would
            if isinstance(backlog, tuple):
                pending, events, start = backlog
                await pending
                await self._handle(events, start)
            if self._outbox.unread_exceeded and not await self.let_peer_read():
                return

    def _consume(self, chunk: bytes) -> bool:
        """Handle every message of ``chunk`` in place; stop at the first one that needs
        awaiting, leaving it and the rest to the reader task, or when the peer must read
        our output first. Never raises."""
        try:
            events = self._peer.receive_bytes(chunk)
            stopped = self._dispatcher.run(events)
        except Exception as exc:
            self._backlog = exc
            return False
        if stopped is not None:
            self._backlog = (stopped[0], events, stopped[1])
            return False
        if self._outbox.unread_exceeded:
            self._backlog = _PAUSE
            return False
        return True

    async def after_burst(self) -> None:
        """Let the handlers of a burst of requests run before reading more, then apply
        backpressure: their answers count toward the unread bound only once written."""
        await _aio.yield_once()
        if self._outbox.unread_exceeded:
            await self.let_peer_read()

    async def let_peer_read(self) -> bool:
        """Backpressure: read nothing until the peer took half of our unread output.

        Returns False (having given up on the peer, with the reason logged) when it took
        nothing for ``stall_timeout`` seconds."""
        outbox = self._outbox
        logger.debug("%s: %d bytes unread by the peer; pausing reads", self._name, outbox.backlog)
        if await outbox.wait_unread_halved(self._stall):
            return True
        reason = (
            f"the peer left {outbox.backlog} bytes of our messages unread and read none"
            f" of them for {self._stall:g} s"
        )
        logger.warning("%s: closing the connection: %s", self._name, reason)
        self._on_stall(reason, outbox)
        return False

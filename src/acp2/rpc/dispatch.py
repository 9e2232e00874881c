"""Acting on the peer's events: the handler-running half of :class:`acp2.rpc.Connection`.

A :class:`Dispatcher` takes the events a :class:`~acp2.rpc.peer.Peer` returned and does
what each says, in order: a notification handler is called inline (a coroutine one is
awaited before the next event), a request handler gets a task of its own, a waiter of
ours is woken, a frame is written. Handling is synchronous: :meth:`Dispatcher.run`
returns an awaitable only when an event needs awaiting, so routing a message costs plain
calls, not a chain of coroutines. Nothing a handler does escapes into the reader: a
failing notification handler is logged, a failing request handler is answered.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any, Final

from msgspec import Raw

from acp2 import _aio
from acp2.errors import RequestCancelled
from acp2.rpc.events import (
    CancelRequested,
    Event,
    InvalidMessage,
    Notified,
    Reply,
    RequestReceived,
    ResponseReceived,
    UnknownNotification,
)
from acp2.rpc.messages import TOO_DEEP
from acp2.rpc.peer import Peer
from acp2.rpc.responder import Responder

__all__ = ["REQUEST_BURST", "Dispatcher", "UnknownNotificationHandler"]

logger = logging.getLogger("acp2.rpc")

UnknownNotificationHandler = Callable[[str, Raw | None], Awaitable[None] | None]

#: After this many requests in one go, the reader lets their handlers run before it reads
#: on: one chunk of small requests (~1,000 in 64 KiB) could otherwise start a thousand
#: big answers before the unread bound is checked again.
REQUEST_BURST: Final = 64


class Dispatcher:
    """Does what the events of one connection's peer say (see the module docstring).

    ``put`` writes a frame; ``after_burst`` is awaited after :data:`REQUEST_BURST`
    requests in a row; ``on_crash`` is called once when a handler task ends with an
    exception no handler should raise (e.g. ``KeyboardInterrupt``).
    """

    def __init__(
        self,
        peer: Peer[Any],
        put: Callable[[bytes], None],
        after_burst: Callable[[], Awaitable[None]],
        on_crash: Callable[[BaseException], None],
    ) -> None:
        self.name = peer.name
        self.responder = Responder(peer, put)
        self.unknown_notification: UnknownNotificationHandler | None = None
        self._peer = peer
        self._put = put
        self._after_burst = after_burst
        self._on_crash = on_crash
        self._burst = 0
        self._tasks = _aio.Tasks(self._task_failed)
        #: The events :meth:`run` stopped in (the list and the next index), until a later
        #: call finishes them: what :meth:`abandon` settles when the connection closes.
        self._unfinished: tuple[list[Event], int] | None = None

    def run(self, events: list[Event], index: int = 0) -> tuple[Awaitable[None], int] | None:
        """Handle ``events[index:]`` in order. Return ``(awaitable, next index)`` at the
        first event that needs awaiting (the caller awaits it, then calls again from that
        index), or None when all were handled. Never raises."""
        for at in range(index, len(events)):
            event = events[at]
            # Notifications dominate a busy session: their handler is called right here.
            if type(event) is Notified:
                route = event.route
                try:
                    if route.raw:
                        pending = route.handler(event.params, event.body)
                    else:
                        pending = route.handler(event.params)
                except Exception as exc:
                    self._handler_failed(route.method, exc)
                    continue
                if pending is not None:  # a coroutine function: await it first
                    self._unfinished = (events, at + 1)
                    return self._finish(route.method, pending), at + 1
            else:
                pending = self._other(event)
                if pending is not None:
                    self._unfinished = (events, at + 1)
                    return pending, at + 1
        self._unfinished = None
        return None

    def abandon(self, error: Exception) -> None:
        """The connection is closing with events :meth:`run` has not reached: their
        responses fail our waiters with ``error`` (as if they had not arrived) and their
        requests are answered ``-32800``, since no handler will run for them."""
        unfinished, self._unfinished = self._unfinished, None
        if unfinished is not None:
            events, index = unfinished
            for event in events[index:]:
                if type(event) is ResponseReceived:
                    assert isinstance(event, ResponseReceived)
                    _aio.resolve(event.entry, (None, error))
        self.responder.cancel_all()

    def _handler_failed(self, method: str, exc: Exception) -> None:
        if isinstance(exc, RecursionError):
            logger.warning("%s: dropped %s notification: %s", self.name, method, TOO_DEEP)
        else:
            logger.error("%s: notification handler for %s failed", self.name, method, exc_info=exc)

    async def _finish(self, method: str, pending: Awaitable[None]) -> None:
        try:
            await pending
        except Exception:
            logger.exception("%s: notification handler for %s failed", self.name, method)

    def _other(self, event: Event) -> Awaitable[None] | None:
        tp = type(event)
        if tp is RequestReceived:
            assert isinstance(event, RequestReceived)
            return self._start(event)
        if tp is ResponseReceived:
            assert isinstance(event, ResponseReceived)
            _aio.resolve(event.entry, (event.result, event.error))
        elif tp is CancelRequested:
            assert isinstance(event, CancelRequested)
            self.responder.cancel(event.request)
        elif tp is Reply:
            assert isinstance(event, Reply)
            self._put(event.frame)
        elif tp is InvalidMessage:
            assert isinstance(event, InvalidMessage)
            if event.reply is not None:
                self._put(event.reply)
        elif tp is UnknownNotification:
            assert isinstance(event, UnknownNotification)
            return self._unknown(event)
        return None

    def _unknown(self, event: UnknownNotification) -> Awaitable[None] | None:
        handler = self.unknown_notification
        if handler is None:
            # Not silent: a peer may send notifications this end does not handle yet
            # (e.g. the Preview's unstable auth/status_update).
            logger.debug("%s: no handler for notification %s", self.name, event.method)
            return None
        try:
            pending = handler(event.method, event.params)
        except Exception:
            logger.exception("%s: notification handler for %s failed", self.name, event.method)
            return None
        return None if pending is None else self._finish(event.method, pending)

    # --- request handler tasks ----------------------------------------------------------

    def _start(self, event: RequestReceived) -> Awaitable[None] | None:
        """Start the handler of a request in a task of its own (or answer ``-32800`` when
        the connection began closing since the peer reported it)."""
        responder = self.responder
        request = event.request
        if self._peer.closing:
            responder.answer_error(request, RequestCancelled("Connection is closing"))
            return None
        responder.open(request)
        self._tasks.spawn(responder.serve(request, event.handler, event.params))
        self._burst += 1
        if self._burst < REQUEST_BURST:
            return None
        self._burst = 0
        return self._after_burst()

    def _task_failed(self, exc: BaseException) -> None:
        # Responder.serve handles every Exception; only e.g. KeyboardInterrupt gets here.
        self._on_crash(exc)

    async def wait_tasks(self) -> None:
        """Return once every request handler task has ended (shielded from cancellation)."""
        await self._tasks.wait()

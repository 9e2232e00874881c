"""Running the handler of each inbound request, and writing its one answer.

The :class:`~acp2.rpc.peer.Peer` decides that a request is answered exactly once
(TR-09, TR-21, TR-22, TR-23); a :class:`Responder` runs its handler inside the request's
own cancel scope and writes the answer the peer returns, in the same synchronous step in
which the handler returns -- or, when the handler returns a :class:`~acp2.rpc.later.Later`,
in the step that resolves it. Handler exceptions are mapped to error responses here, in
one place: :func:`handler_failed` is the one ``-32603`` of a failing handler, for a
connection's requests and for an in-process end's (:mod:`acp2.bridge.inprocess`) alike.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import anyio

from acp2 import _aio
from acp2.errors import InternalError, RequestCancelled, RequestError, internal_error
from acp2.rpc.events import Incoming
from acp2.rpc.later import Later
from acp2.rpc.peer import Peer

__all__ = ["Responder", "handler_failed"]

logger = logging.getLogger("acp2.rpc")


def handler_failed(exc: BaseException, where: str, what: str) -> InternalError:
    """The ``-32603`` error that answers a request whose handler raised ``exc`` (anything
    but a ``RequestError``, which is answered as it is); the traceback is logged on
    ``acp2.rpc`` as ``"<where>: request handler failed (<what>)"``. The error itself is
    :func:`acp2.errors.internal_error`'s (one line, at most 200 characters): the
    handler's text never reaches the peer whole."""
    logger.error("%s: request handler failed (%s)", where, what, exc_info=exc)
    return internal_error(exc)


class Responder:
    """The inbound requests being served on one connection, and their answers."""

    def __init__(self, peer: Peer[Any], put: Callable[[bytes], None]) -> None:
        self._peer = peer
        self._put = put
        self._idle: anyio.Event | None = None

    def open(self, request: Incoming) -> None:
        """Give ``request`` its cancel scope (before its handler starts)."""
        request.scope = _aio.cancel_scope()

    @staticmethod
    def cancel(request: Incoming) -> None:
        """Cancel the handler of ``request`` (TR-22), or its :class:`Later` once the
        handler returned one; a no-op before it was opened."""
        if request.scope is not None:
            request.scope.cancel()

    def cancel_all(self) -> None:
        """Cancel every running handler (shutdown, TR-23); answer ``-32800`` at once the
        requests whose handler has not started (they were read, not handled yet)."""
        for request in self._peer.live_requests():
            if request.scope is None:
                self.answer_error(request, RequestCancelled("Connection is closing"))
            else:
                request.scope.cancel()

    async def wait_idle(self) -> None:
        """Return once every inbound request has been answered."""
        while self._peer.unanswered:
            self._idle = anyio.Event()
            await self._idle.wait()

    async def serve(
        self, request: Incoming, handler: Callable[[Any], Awaitable[Any]], params: Any
    ) -> None:
        """Run ``handler(params)`` in the request's cancel scope and answer it once.

        A cancelled handler is answered ``-32800`` unless it returned a result of its
        own; ``RequestError`` is sent as is; anything else is ``-32603`` and logged. A
        :class:`Later` it returns answers the request when it is resolved.
        """
        scope: anyio.CancelScope = request.scope
        try:
            with scope:
                result = await handler(params)
                if type(result) is Later:
                    self._defer(request, result)
                else:
                    self._sent(self._peer.send_response(request, result))
                return
            self.answer_error(request, RequestCancelled())
        except RequestError as exc:
            self.answer_error(request, exc)
        except anyio.get_cancelled_exc_class():
            self.answer_error(request, RequestCancelled())
            raise
        except Exception as exc:
            self.answer_error(request, handler_failed(exc, self._peer.name, f"id {request.id!r}"))
        except BaseException as exc:  # e.g. KeyboardInterrupt: answer, then let it through
            self.answer_error(request, internal_error(exc))
            raise

    def _defer(self, request: Incoming, later: Later[Any]) -> None:
        # The request's scope is now its Later: a cancel (TR-22, TR-23) reaches it there.
        request.scope = later

        def answer(result: Any, error: RequestError | None) -> None:
            if error is None:
                self._sent(self._peer.send_response(request, result))
            else:
                self.answer_error(request, error)

        later.bind(answer)

    def answer_error(self, request: Incoming, error: RequestError) -> None:
        """Answer ``request`` with ``error``, if still unanswered."""
        self._sent(self._peer.send_error(request, error))

    def _sent(self, frame: bytes | None) -> None:
        if frame is not None:
            self._put(frame)
        if self._idle is not None and not self._peer.unanswered:
            self._idle.set()

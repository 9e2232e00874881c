"""Answering inbound requests exactly once (TR-09, TR-21, TR-22, TR-23).

A :class:`Responder` holds, per live inbound request, a :class:`Live` entry in an
:class:`~acp2.rpc.pending.InboundRequests` table. That entry is the right to answer:
whoever removes it writes the one response, so a cancelled request, a late handler and
a shutdown can never answer twice. :meth:`Responder.serve` runs a handler inside the
request's cancel scope and appends its answer in the same synchronous step in which the
handler returns. Handler exceptions are mapped to error responses here, in one place.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import msgspec

from acp2.errors import InternalError, RequestCancelled, RequestError, summarize
from acp2.rpc.messages import RequestId, encode_error, encode_result
from acp2.rpc.pending import BatchReply, InboundRequests

__all__ = ["Live", "Responder"]

logger = logging.getLogger("acp2.rpc")


class Live:
    """One inbound request being served: its cancel scope and its batch, if any."""

    __slots__ = ("batch", "scope")

    def __init__(self, batch: BatchReply | None) -> None:
        self.scope = anyio.CancelScope()
        self.batch = batch


def one_line(exc: BaseException) -> str:
    """Return the one-line ``-32603`` message for an unexpected handler exception."""
    return f"Internal error: {summarize(exc)}"[:200]


class Responder:
    """The live inbound requests of one connection and their single answers."""

    def __init__(self, name: str, put: Callable[[bytes], None]) -> None:
        self.name = name
        self._put = put
        self._live: InboundRequests[Live] = InboundRequests()
        self._idle: anyio.Event | None = None

    def open(self, rid: RequestId, batch: BatchReply | None) -> Live | None:
        """Register a new inbound request; None (and a warning) if ``rid`` is already live."""
        live = Live(batch)
        if not self._live.add(rid, live):
            logger.warning("%s: ignored request reusing live id %r", self.name, rid)
            return None
        if batch is not None:
            batch.expect()
        return live

    def cancel(self, rid: RequestId) -> None:
        """Cancel the handler of ``rid``; unknown or answered ids are ignored (TR-22)."""
        live = self._live.get(rid)
        if live is not None:
            live.scope.cancel()

    def cancel_all(self) -> None:
        """Cancel every running handler (shutdown, TR-23)."""
        for live in self._live.values():
            live.scope.cancel()

    async def wait_idle(self) -> None:
        """Return once every inbound request has been answered."""
        while len(self._live):
            self._idle = anyio.Event()
            await self._idle.wait()

    async def serve(
        self, rid: RequestId, live: Live, handler: Callable[[Any], Awaitable[Any]], params: Any
    ) -> None:
        """Run ``handler(params)`` in the request's cancel scope and answer it once.

        A cancelled handler is answered ``-32800`` unless it returned a result of its
        own; ``RequestError`` is sent as is; anything else is ``-32603`` and logged.
        """
        try:
            with live.scope:
                result = await handler(params)
                self.answer_result(rid, live, result)
                return
            self.answer_error(rid, live, RequestCancelled())
        except RequestError as exc:
            self.answer_error(rid, live, exc)
        except anyio.get_cancelled_exc_class():
            self.answer_error(rid, live, RequestCancelled())
            raise
        except Exception as exc:
            logger.exception("%s: request handler failed (id %r)", self.name, rid)
            self.answer_error(rid, live, InternalError(one_line(exc)))
        except BaseException as exc:  # e.g. KeyboardInterrupt: answer, then let it through
            self.answer_error(rid, live, InternalError(one_line(exc)))
            raise

    def answer_result(self, rid: RequestId, live: Live, result: Any) -> None:
        """Answer with ``result`` (``-32603`` if it cannot be encoded), if still unanswered."""
        if self._live.get(rid) is not live:
            return
        try:
            frame = encode_result(rid, result)
        except (TypeError, ValueError, msgspec.EncodeError) as exc:
            logger.exception("%s: result for id %r is not encodable", self.name, rid)
            frame = encode_error(rid, InternalError(one_line(exc)))
        self._answer(rid, live, frame)

    def answer_error(self, rid: RequestId, live: Live, error: RequestError) -> None:
        """Answer with ``error``, if still unanswered."""
        if self._live.get(rid) is not live:
            return
        try:
            frame = encode_error(rid, error)
        except (TypeError, ValueError, msgspec.EncodeError):  # unencodable ``data``
            frame = encode_error(rid, RequestError(error.message, code=error.code))
        self._answer(rid, live, frame)

    def flush_batch(self, reply: BatchReply) -> None:
        """Send a batch's reply array once it is complete."""
        frame = reply.take()
        if frame is not None:
            self._put(frame)

    def _answer(self, rid: RequestId, live: Live, frame: bytes) -> None:
        self._live.pop(rid)
        if live.batch is None:
            self._put(frame)
        else:
            live.batch.add(frame, answers_request=True)
            self.flush_batch(live.batch)
        if not len(self._live) and self._idle is not None:
            self._idle.set()

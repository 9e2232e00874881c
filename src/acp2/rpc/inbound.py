"""Inbound dispatch for :class:`acp2.rpc.Connection`: the handler registry, and routing
of every parsed frame in arrival order (notifications inline, one task per request,
responses to our waiters, ``-32700`` / ``-32600`` for bad frames, batches per TR-14).

Whatever one message does -- JSON nested deeper than the decoder follows, a handler or
decoder failing in an unforeseen way -- stays that message's problem: any exception
while decoding or dispatching it becomes its error reply (a request), its waiter's
error (a response) or one log line (a notification), and the next message is read.

Answering requests exactly once is :class:`~acp2.rpc.responder.Responder`'s job.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Final, Literal, TypeVar, overload

import msgspec
from msgspec import Raw

from acp2.errors import (
    InvalidParams,
    InvalidRequest,
    LocalProtocolError,
    MethodNotFound,
    ParseError,
    RemoteProtocolError,
    RequestCancelled,
    error_for_code,
    summarize,
)
from acp2.rpc.framing import LineFramer, Oversized
from acp2.rpc.messages import (
    CANCEL_METHOD,
    INVALID_REQUEST,
    PARSE_ERROR,
    TOO_DEEP,
    Batch,
    ErrorResponse,
    Invalid,
    Message,
    Notification,
    Request,
    Response,
    encode_error,
    parse_frame,
)
from acp2.rpc.outbox import Tap
from acp2.rpc.pending import BatchReply
from acp2.rpc.responder import Responder
from acp2.rpc.routes import Route, Routes
from acp2.rpc.sniff import classify_line, classify_oversized
from acp2.schema.codec import decode, decode_any

__all__ = ["Inbound", "NotificationHandler", "RequestHandler"]

logger = logging.getLogger("acp2.rpc")

P = TypeVar("P")
RequestHandler = Callable[[Any], Awaitable[Any]]
NotificationHandler = Callable[[Any], Awaitable[None] | None]
UnknownRequestHandler = Callable[[str, Raw | None], Awaitable[Any]]
UnknownNotificationHandler = Callable[[str, Raw | None], Awaitable[None] | None]

_EMPTY_PARAMS: Final = Raw(b"{}")


def _failure_message(exc: Exception) -> str:
    """The error message for a message whose dispatch raised ``exc``."""
    if isinstance(exc, RecursionError):
        return f"Invalid request: {TOO_DEEP}"
    return f"Invalid request: could not handle the message ({summarize(exc)})"[:200]


def _is_utf8(line: bytes) -> bool:
    try:
        line.decode()
    except UnicodeDecodeError:
        return False
    return True


class _CancelParams(msgspec.Struct, rename="camel"):
    request_id: int | str


class Inbound:
    """Handler registry and inbound dispatch; the base of :class:`Connection`."""

    def __init__(self, *, name: str, max_message_size: int, tap: Tap | None) -> None:
        self.name = name
        self._tap = tap
        self._framer = LineFramer(max_message_size)
        self._requests: dict[str, tuple[Any, RequestHandler]] = {}
        self._routes = Routes()
        self._unknown_request: UnknownRequestHandler | None = None
        self._unknown_notification: UnknownNotificationHandler | None = None
        self._responder = Responder(name, self._put)
        #: How many invalid messages the peer sent, and what was wrong with the last one.
        self._invalid: tuple[int, str | None] = (0, None)

    @property
    def last_protocol_error(self) -> str | None:
        """What was wrong with the last invalid message the peer sent (None if none was),
        e.g. ``"Parse error: ..."``; with :attr:`protocol_errors`, for error messages."""
        return self._invalid[1]

    @property
    def protocol_errors(self) -> int:
        """How many invalid messages the peer sent (each answered or logged, then dropped)."""
        return self._invalid[0]

    # --- registration -------------------------------------------------------------

    def on_request(
        self, method: str, params_type: type[P], handler: Callable[[P], Awaitable[Any]]
    ) -> None:
        """Serve ``method``: params are decoded as ``params_type`` (``-32602`` if they do
        not fit) and the handler's return value is the result. Replaces any handler."""
        self._check_method(method)
        self._requests[method] = (params_type, handler)

    @overload
    def on_notification(
        self,
        method: str,
        params_type: type[P],
        handler: Callable[[P], Awaitable[None] | None],
        *,
        raw: Literal[False] = False,
    ) -> None: ...
    @overload
    def on_notification(
        self,
        method: str,
        params_type: type[P],
        handler: Callable[[P, bytes], Awaitable[None] | None],
        *,
        raw: Literal[True],
    ) -> None: ...
    def on_notification(
        self,
        method: str,
        params_type: type[P],
        handler: Callable[..., Awaitable[None] | None],
        *,
        raw: bool = False,
    ) -> None:
        """Handle notification ``method``; called inline by the reader, in arrival order
        (keep it quick; it must not await ``request()``). The handler may be a plain
        function (cheapest: no coroutine per message) or a coroutine function, which the
        reader awaits before the next message. Undecodable params are logged.

        With ``raw=True`` the handler is called as ``handler(params, raw_params)``, where
        ``raw_params`` is the exact JSON text of the params (bytes), for handlers that
        sometimes need the original bytes. Replaces any handler for ``method``."""
        self._check_method(method)
        self._routes.add(Route(method, params_type, handler, raw))

    def on_unknown_request(self, handler: UnknownRequestHandler) -> None:
        """Serve every request without a registered handler (default: ``-32601``).

        The handler gets the method and raw params; it may raise ``MethodNotFound``."""
        self._unknown_request = handler

    def on_unknown_notification(self, handler: UnknownNotificationHandler) -> None:
        """Receive every notification without a registered handler (default: ignored)."""
        self._unknown_notification = handler

    @staticmethod
    def _check_method(method: str) -> None:
        if method == CANCEL_METHOD:
            raise LocalProtocolError(f"{CANCEL_METHOD} is handled by the connection itself")

    # --- hooks the connection provides ----------------------------------------------

    _closing: bool

    def _spawn(self, inbound_task: Any, *args: Any) -> Awaitable[None] | None:
        """Start a request handler task; may return an awaitable the reader must await
        before the next message (to let a burst of handlers run, see Connection)."""
        raise NotImplementedError

    def _put(self, frame: bytes) -> None:
        raise NotImplementedError

    def _deliver(self, rid: Any, result: Raw | None, error: Exception | None) -> bool:
        raise NotImplementedError

    # --- dispatch -----------------------------------------------------------------
    #
    # Dispatch is synchronous: each step returns None when the message was handled in
    # place, or an awaitable the reader must await before the next message (an async
    # notification handler, a batch). Routing a message therefore costs plain calls,
    # not a chain of coroutines.

    def _dispatch(self, item: bytes | Oversized) -> Awaitable[None] | None:
        if type(item) is not bytes:
            assert isinstance(item, Oversized)
            return self._handle(classify_oversized(item, self._framer.max_message_size), None)
        if self._tap is not None:
            self._tap("in", item)
        # The hot path: a notification in the canonical layout, params decoded straight
        # from the line by its handler's strict decoder (see acp2.rpc.routes).
        route = self._routes.match(item)
        if route is not None and (item.isascii() or _is_utf8(item)):
            body = item[route.prefix_len : -1]
            try:
                params = route.decoder.decode(body)
            except msgspec.DecodeError:
                pass  # the general path retries leniently, or reports the error
            else:
                return self._notify(route, params, body)
        message = parse_frame(item)
        if isinstance(message, Batch):
            return self._dispatch_batch(message)
        return self._handle(message, None)

    def _dispatch_all(
        self, items: list[bytes | Oversized], start: int = 0
    ) -> tuple[Awaitable[None], int] | None:
        """Dispatch ``items[start:]`` in order. Return ``(awaitable, next index)`` at the
        first message that needs awaiting (the caller awaits it, then calls again from
        that index), or None when all were handled.

        The loop inlines the hot path of :meth:`_dispatch` for the route matched last
        (a stream repeats one notification): same checks, same result, fewer calls.
        """
        routes = self._routes
        dispatch = self._dispatch
        fast = self._tap is None
        index = start
        end = len(items)
        while True:
            try:  # around the loop, not in it: a failure is that message's alone
                while index < end:
                    item = items[index]
                    index += 1
                    route = routes.hot
                    if (
                        fast
                        and route is not None
                        and type(item) is bytes
                        and item.startswith(route.prefix)
                        and item[-1] == 125  # b"}"
                        and item.isascii()
                    ):
                        body = item[route.prefix_len : -1]
                        try:
                            params = route.decoder.decode(body)
                        except msgspec.DecodeError:
                            pending = dispatch(item)
                        else:
                            pending = self._notify(route, params, body)
                    else:
                        pending = dispatch(item)
                    if pending is not None:
                        return pending, index
                return None
            except Exception as exc:
                self._on_failed(items[index - 1], exc)

    def _on_failed(self, item: bytes | Oversized, exc: Exception) -> None:
        """Dispatching ``item`` raised ``exc``: reject that message alone, never raise."""
        try:
            if type(item) is not bytes:  # classify_oversized does not raise; paranoia
                logger.error("%s: dropped an oversized frame: %s", self.name, summarize(exc))
                return
            message = _failure_message(exc)
            self._on_invalid(classify_line(item, message), None)
        except Exception:
            logger.exception("%s: could not reject a message that failed", self.name)

    async def _dispatch_batch(self, batch: Batch) -> None:
        reply = BatchReply()
        for entry in batch.entries:
            try:
                pending = self._handle(entry, reply)
                if pending is not None:
                    await pending
            except Exception as exc:
                message = _failure_message(exc)
                self._on_invalid(Invalid(INVALID_REQUEST, message), reply)
        reply.seal()
        self._responder.flush_batch(reply)

    def _handle(self, message: Message, batch: BatchReply | None) -> Awaitable[None] | None:
        # Ordered by frequency: notifications dominate a busy session.
        if isinstance(message, Notification):
            return self._on_notification(message)
        if isinstance(message, Response):
            if not self._deliver(message.id, message.result, None):
                logger.debug("%s: dropped response to unknown id %r", self.name, message.id)
        elif isinstance(message, Request):
            return self._on_request(message, batch)
        elif isinstance(message, ErrorResponse):
            self._on_error_response(message)
        else:
            self._on_invalid(message, batch)
        return None

    def _on_notification(self, note: Notification) -> Awaitable[None] | None:
        if note.method == CANCEL_METHOD:
            self._on_cancel(note.params)
            return None
        route = self._routes.get(note.method)
        if route is None:
            if self._unknown_notification is None:
                return None
            try:
                pending = self._unknown_notification(note.method, note.params)
            except Exception:
                logger.exception("%s: notification handler for %s failed", self.name, note.method)
                return None
            return None if pending is None else self._finish(note.method, pending)
        body = note.params or _EMPTY_PARAMS
        try:
            params = decode(body, route.params_type)
        except (ValueError, RecursionError) as exc:
            logger.warning("%s: dropped %s notification: %s", self.name, note.method, exc)
            return None
        return self._notify(route, params, bytes(body) if route.raw else b"")

    def _notify(self, route: Route, params: Any, body: bytes) -> Awaitable[None] | None:
        try:
            pending = route.handler(params, body) if route.raw else route.handler(params)
        except RecursionError:
            logger.warning("%s: dropped %s notification: %s", self.name, route.method, TOO_DEEP)
            return None
        except Exception:
            logger.exception("%s: notification handler for %s failed", self.name, route.method)
            return None
        if pending is None:  # a plain function: handled already
            return None
        return self._finish(route.method, pending)

    async def _finish(self, method: str, pending: Awaitable[None]) -> None:
        try:
            await pending
        except Exception:
            logger.exception("%s: notification handler for %s failed", self.name, method)

    def _on_cancel(self, params: Raw | None) -> None:
        try:
            rid = decode(params or _EMPTY_PARAMS, _CancelParams).request_id
        except ValueError as exc:
            logger.warning("%s: malformed %s: %s", self.name, CANCEL_METHOD, exc)
            return
        self._responder.cancel(rid)

    def _on_error_response(self, message: ErrorResponse) -> None:
        data = None
        if message.data is not None:
            data = decode_any(message.data)
        error = error_for_code(message.code, message.message, data, remote=True)
        if message.id is None:
            logger.warning("%s: peer reported %r about an unreadable message", self.name, error)
        elif not self._deliver(message.id, None, error):  # e.g. -32800 after our cancel
            logger.debug("%s: dropped error %r for unknown id %r", self.name, error, message.id)

    def _on_invalid(self, invalid: Invalid, batch: BatchReply | None) -> None:
        logger.warning("%s: invalid frame: %s", self.name, invalid.message)
        self._invalid = (self._invalid[0] + 1, invalid.message)
        if invalid.response_to is not None:
            self._deliver(invalid.response_to, None, RemoteProtocolError(invalid.message))
        if not invalid.reply:
            return
        cls = ParseError if invalid.code == PARSE_ERROR else InvalidRequest
        frame = encode_error(invalid.reply_id, cls(invalid.message))
        if batch is None:
            self._put(frame)
        else:
            batch.add(frame, answers_request=False)

    # --- requests -----------------------------------------------------------------

    def _on_request(self, req: Request, batch: BatchReply | None) -> Awaitable[None] | None:
        responder = self._responder
        live = responder.open(req.id, batch)
        if live is None:
            return None
        if self._closing:
            responder.answer_error(req.id, live, RequestCancelled("Connection is closing"))
            return None
        entry = self._requests.get(req.method)
        if entry is None:
            if self._unknown_request is None:
                error = MethodNotFound(f"Method not found: {req.method}")
                responder.answer_error(req.id, live, error)
                return None
            handler = functools.partial(self._unknown_request, req.method)
            return self._spawn(responder.serve, req.id, live, handler, req.params)
        try:
            params = decode(req.params or _EMPTY_PARAMS, entry[0])
        except Exception as exc:  # whatever decoding raised: the request is answered once
            reason = TOO_DEEP if isinstance(exc, RecursionError) else str(exc) or summarize(exc)
            responder.answer_error(req.id, live, InvalidParams(f"Invalid params: {reason}"))
            return None
        return self._spawn(responder.serve, req.id, live, entry[1], params)

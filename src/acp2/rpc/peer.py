"""The JSON-RPC 2.0 peer as a sans-IO state machine: messages in, events out, bytes out.

A :class:`Peer` is one side of one JSON-RPC conversation, h11-style: it does no I/O
and needs no event loop. Feed it what the transport delivered --
:meth:`Peer.receive_bytes` for a newline-delimited byte stream (stdio, a pipe),
:meth:`Peer.receive_message` for one whole message or batch (a POST body, an SSE event,
a WebSocket frame) -- and it returns :mod:`~acp2.rpc.events` in arrival order. The
``send_*`` methods return the bytes of one frame (no newline) for the caller to write.

The protocol's rules live here, once:

* ids: ours are consecutive integers, never reused; a response to an id that is not
  pending (answered, cancelled, never sent) is dropped (TR-09, TR-10);
* every request of the remote side is answered exactly once: ``send_response`` /
  ``send_error`` return None for a request already answered (TR-21, TR-22), and while
  the peer is closing, new requests are answered ``-32800`` at once (TR-23);
* ``$/cancel_request`` (TR-19) becomes :class:`~acp2.rpc.events.CancelRequested` for a
  live request and nothing otherwise; :meth:`Peer.cancel_request` forgets our request, so
  its late response is dropped, and returns the notification to send;
* invalid messages are counted and answered ``-32700`` / ``-32600`` as the spec says
  (:mod:`acp2.rpc.messages`, :mod:`acp2.rpc.sniff`); batches are answered with one array
  once every request in them is (TR-14).

Whatever one message does -- JSON nested deeper than the decoder follows, a decoder
failing in an unforeseen way -- stays that message's problem: it becomes an invalid
message, and the next one is read.

The hot path is one loop (:meth:`Peer._receive`): a notification in the canonical
layout is decoded straight from its line by its route's strict decoder
(:mod:`acp2.rpc.routes`), without an envelope pass.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Iterator
from typing import Any, Final, Generic, TypeVar

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
    RequestError,
    error_for_code,
    internal_error,
    summarize,
)
from acp2.rpc.events import (
    CancelRequested,
    Event,
    Incoming,
    InvalidMessage,
    Notified,
    Reply,
    RequestReceived,
    ResponseReceived,
    Tap,
    UnknownNotification,
)
from acp2.rpc.framing import (
    DEFAULT_MAX_MESSAGE_SIZE,
    HEAD_SIZE,
    TAIL_SIZE,
    LineFramer,
    Oversized,
)
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
    encode_notification,
    encode_request,
    encode_result,
    parse_frame,
)
from acp2.rpc.pending import BatchReply, InboundRequests, PendingRequests
from acp2.rpc.routes import Route, Routes
from acp2.rpc.sniff import classify_line, classify_oversized
from acp2.schema.codec import decode, decode_any
from acp2.schema.unmodelled import IgnoredFields

__all__ = ["Peer"]

logger = logging.getLogger("acp2.rpc")

T = TypeVar("T")

_EMPTY_PARAMS: Final = Raw(b"{}")


class _CancelParams(msgspec.Struct, rename="camel"):
    request_id: int | str


def _failure_message(exc: Exception) -> str:
    """The error message for a message whose handling raised ``exc``."""
    if isinstance(exc, RecursionError):
        return f"Invalid request: {TOO_DEEP}"
    return f"Invalid request: could not handle the message ({summarize(exc)})"[:200]


def _is_utf8(line: bytes) -> bool:
    try:
        line.decode()
    except UnicodeDecodeError:
        return False
    return True


class Peer(Generic[T]):
    """One side of a JSON-RPC 2.0 conversation, without I/O (see the module docstring).

    ``T`` is what the caller keeps per request of its own (e.g. a waiter): given to
    :meth:`send_request`, handed back in :class:`~acp2.rpc.events.ResponseReceived`.
    Handlers registered with :meth:`serve` / :meth:`route` are opaque here: the peer
    decodes their params and names them in events; the caller calls them. ``tap`` sees
    every incoming frame.
    """

    def __init__(
        self,
        name: str = "peer",
        *,
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
        tap: Tap | None = None,
    ) -> None:
        self.name = name
        self._tap = tap
        self._framer = LineFramer(max_message_size)
        self._routes = Routes()
        self._requests: dict[str, tuple[Any, Callable[[Any], Any]]] = {}
        self._unknown_request: Callable[[str, Raw | None], Any] | None = None
        self._pending: PendingRequests[T] = PendingRequests()
        self._live: InboundRequests[Incoming] = InboundRequests()
        self._invalid: tuple[int, str | None] = (0, None)
        #: The keys the remote side sent that decoding skipped (checked at debug level).
        self.ignored = IgnoredFields(logger, name)
        #: True once :meth:`close` was called: new requests are answered ``-32800``.
        #: Read it; only :meth:`close` sets it (a plain attribute: read on hot paths).
        self.closing = False

    # --- state --------------------------------------------------------------------

    @property
    def protocol_errors(self) -> int:
        """How many invalid messages the remote side sent."""
        return self._invalid[0]

    @property
    def last_protocol_error(self) -> str | None:
        """What was wrong with the last invalid message (None if there was none)."""
        return self._invalid[1]

    @property
    def unanswered(self) -> int:
        """How many requests of the remote side are not answered yet."""
        return len(self._live)

    def live_requests(self) -> Iterator[Incoming]:
        """The requests of the remote side not answered yet (a snapshot)."""
        return self._live.values()

    def close(self) -> list[T]:
        """Stop taking requests (later ones are answered ``-32800``) and return the
        entries of our requests still pending, which will get no response."""
        self.closing = True
        return self._pending.drain()

    # --- registration -------------------------------------------------------------

    def serve(self, method: str, params_type: Any, handler: Callable[[Any], Any]) -> None:
        """Report requests for ``method`` with params decoded as ``params_type``
        (``-32602`` when they do not fit), naming ``handler``. Replaces any entry."""
        self._check_method(method)
        self._requests[method] = (params_type, handler)

    def serve_unknown(self, handler: Callable[[str, Raw | None], Any] | None) -> None:
        """Report requests for unregistered methods naming ``handler`` (called as
        ``handler(method, raw_params)``); None answers them ``-32601`` (the default)."""
        self._unknown_request = handler

    def route(self, method: str, params_type: Any, handler: Callable[..., Any], raw: bool) -> None:
        """Report notifications ``method`` with params decoded as ``params_type``
        (undecodable ones are logged and dropped), naming ``handler``; ``raw``: also
        give the exact params bytes. Replaces any route for ``method``."""
        self._check_method(method)
        self._routes.add(Route(method, params_type, handler, raw))

    @staticmethod
    def _check_method(method: str) -> None:
        if method == CANCEL_METHOD:
            raise LocalProtocolError(f"{CANCEL_METHOD} is handled by the connection itself")

    # --- incoming -----------------------------------------------------------------

    def receive_bytes(self, data: bytes) -> list[Event]:
        """Take a chunk of a newline-delimited stream; return the events of every message
        it completed, in order (none for a partial line)."""
        return self._receive(self._framer.feed(data))

    def end_of_stream(self) -> list[Event]:
        """The stream ended: return the events of a final unterminated line, if any."""
        return self._receive(self._framer.close())

    def receive_message(self, message: bytes) -> list[Event]:
        """Take one whole message or batch (no framing: a POST body, a WebSocket frame);
        one bigger than ``max_message_size`` is rejected like an oversized line."""
        limit = self._framer.max_message_size
        if len(message) > limit:
            head, tail = message[:HEAD_SIZE], message[-TAIL_SIZE:]
            return self._receive([Oversized(len(message), head, tail)])
        return self._receive([message.strip()] if message.strip() else [])

    def _receive(self, items: list[bytes | Oversized]) -> list[Event]:
        """The events of ``items`` (framed lines), in order; never raises."""
        events: list[Event] = []
        append = events.append
        routes = self._routes
        tap = self._tap
        index = 0
        end = len(items)
        while True:
            try:  # around the loop, not in it: a failure is that message's alone
                while index < end:
                    item = items[index]
                    index += 1
                    if type(item) is not bytes:
                        self._on_oversized(item, events)
                        continue
                    if tap is not None:
                        tap("in", item)
                    # The hot path: a notification in its route's canonical layout, its
                    # params decoded straight from the line (see acp2.rpc.routes).
                    route = routes.hot
                    if route is None or not item.startswith(route.prefix):
                        route = routes.match(item)
                    if (
                        route is not None
                        and item[-1] == 125  # b"}"
                        and (item.isascii() or _is_utf8(item))
                    ):
                        body = item[route.prefix_len : -1]
                        try:
                            params = route.decoder.decode(body)
                        except msgspec.DecodeError:
                            pass  # the general path retries leniently, or reports it
                        else:
                            append(Notified(route, params, body))
                            continue
                    self._handle(parse_frame(item), None, events)
                # Once per read, not per message: the hot path above stays untouched.
                return self._check_ignored(events) if self.ignored.enabled else events
            except Exception as exc:
                self._on_failed(items[index - 1], exc, events)

    def _check_ignored(self, events: list[Event]) -> list[Event]:
        """Count what decoding skipped in the notifications that carry their bytes (the
        others were checked as they were decoded); return ``events``."""
        for event in events:
            if type(event) is Notified and event.body:
                self.ignored.check(event.route.method, event.body, event.route.params_type)
        return events

    def _on_oversized(self, item: bytes | Oversized, events: list[Event]) -> None:
        assert isinstance(item, Oversized)
        self._handle(classify_oversized(item, self._framer.max_message_size), None, events)

    def _on_failed(self, item: bytes | Oversized, exc: Exception, events: list[Event]) -> None:
        """Handling ``item`` raised ``exc``: reject that message alone, never raise."""
        try:
            if type(item) is not bytes:  # classify_oversized does not raise; paranoia
                logger.error("%s: dropped an oversized frame: %s", self.name, summarize(exc))
                return
            self._on_invalid(classify_line(item, _failure_message(exc)), None, events)
        except Exception:
            logger.exception("%s: could not reject a message that failed", self.name)

    def _receive_batch(self, batch: Batch, events: list[Event]) -> None:
        reply = BatchReply()
        for entry in batch.entries:
            try:
                self._handle(entry, reply, events)
            except Exception as exc:
                invalid = Invalid(INVALID_REQUEST, _failure_message(exc))
                self._on_invalid(invalid, reply, events)
        reply.seal()
        frame = reply.take()
        if frame is not None:
            events.append(Reply(frame))

    def _handle(
        self, message: Message | Batch, batch: BatchReply | None, events: list[Event]
    ) -> None:
        # Ordered by frequency: notifications dominate a busy session.
        if isinstance(message, Notification):
            self._on_notification(message, events)
        elif isinstance(message, Response):
            self._on_response(message.id, message.result, None, events)
        elif isinstance(message, Request):
            self._on_request(message, batch, events)
        elif isinstance(message, ErrorResponse):
            self._on_error_response(message, events)
        elif isinstance(message, Batch):  # never inside a batch: parse_frame nests none
            self._receive_batch(message, events)
        else:
            self._on_invalid(message, batch, events)

    def _on_notification(self, note: Notification, events: list[Event]) -> None:
        if note.method == CANCEL_METHOD:
            self._on_cancel(note.params, events)
            return
        route = self._routes.get(note.method)
        if route is None:
            events.append(UnknownNotification(note.method, note.params))
            return
        body = note.params or _EMPTY_PARAMS
        try:
            params = decode(body, route.params_type)
        except (ValueError, RecursionError) as exc:
            logger.warning("%s: dropped %s notification: %s", self.name, note.method, exc)
            return
        if self.ignored.enabled and not route.raw:  # raw ones: see _check_ignored
            self.ignored.check(note.method, body, route.params_type)
        events.append(Notified(route, params, bytes(body) if route.raw else b""))

    def _on_cancel(self, params: Raw | None, events: list[Event]) -> None:
        try:
            rid = decode(params or _EMPTY_PARAMS, _CancelParams).request_id
        except ValueError as exc:
            logger.warning("%s: malformed %s: %s", self.name, CANCEL_METHOD, exc)
            return
        live = self._live.get(rid)
        if live is not None:  # unknown or answered ids are ignored (TR-22)
            events.append(CancelRequested(live))

    def _on_response(
        self, rid: Any, result: Raw | None, error: Exception | None, events: list[Event]
    ) -> None:
        entry = self._pending.pop(rid)
        if entry is None:  # e.g. -32800 after our cancel: late, dropped
            logger.debug("%s: dropped response to unknown id %r", self.name, rid)
            return
        events.append(ResponseReceived(entry, result, error))

    def _on_error_response(self, message: ErrorResponse, events: list[Event]) -> None:
        data = None if message.data is None else decode_any(message.data)
        error = error_for_code(message.code, message.message, data, remote=True)
        if message.id is None:
            logger.warning("%s: peer reported %r about an unreadable message", self.name, error)
            return
        self._on_response(message.id, None, error, events)

    def _on_invalid(self, invalid: Invalid, batch: BatchReply | None, events: list[Event]) -> None:
        logger.warning("%s: invalid frame: %s", self.name, invalid.message)
        self._invalid = (self._invalid[0] + 1, invalid.message)
        if invalid.response_to is not None:
            self._on_response(
                invalid.response_to, None, RemoteProtocolError(invalid.message), events
            )
        frame = None
        if invalid.reply:
            cls = ParseError if invalid.code == PARSE_ERROR else InvalidRequest
            frame = encode_error(invalid.reply_id, cls(invalid.message))
            if batch is not None:
                batch.add(frame, answers_request=False)
                frame = None
        events.append(InvalidMessage(invalid.message, frame))

    def _on_request(self, req: Request, batch: BatchReply | None, events: list[Event]) -> None:
        incoming = Incoming(req.id, batch)
        if not self._live.add(req.id, incoming):
            logger.warning("%s: ignored request reusing live id %r", self.name, req.id)
            return
        if batch is not None:
            batch.expect()
        entry = self._requests.get(req.method)
        error: RequestError
        if self.closing:
            error = RequestCancelled("Connection is closing")
        elif entry is None:
            if self._unknown_request is not None:
                handler = functools.partial(self._unknown_request, req.method)
                events.append(RequestReceived(incoming, handler, req.params))
                return
            error = MethodNotFound(f"Method not found: {req.method}")
        else:
            try:
                params = decode(req.params or _EMPTY_PARAMS, entry[0])
            except Exception as exc:  # whatever decoding raised: answered once
                why = TOO_DEEP if isinstance(exc, RecursionError) else str(exc) or summarize(exc)
                error = InvalidParams(f"Invalid params: {why}")
            else:
                if self.ignored.enabled:
                    self.ignored.check(req.method, req.params or _EMPTY_PARAMS, entry[0])
                events.append(RequestReceived(incoming, entry[1], params))
                return
        frame = self.send_error(incoming, error)
        if frame is not None:
            events.append(Reply(frame))

    # --- outgoing -----------------------------------------------------------------

    def send_request(self, method: str, params: Any, entry: T) -> tuple[int, bytes]:
        """Allocate an id for a request of ours, remember ``entry`` under it and return
        ``(id, frame)``; ``params=None`` omits ``params``. Raises ``TypeError`` /
        ``msgspec.EncodeError`` (remembering nothing) when ``params`` is not encodable."""
        rid = self._pending.add(entry)
        try:
            return rid, encode_request(rid, method, params)
        except BaseException:
            self._pending.pop(rid)
            raise

    def cancel_request(self, rid: int) -> bytes | None:
        """Forget our request ``rid`` (its late response will be dropped) and return the
        ``$/cancel_request`` frame to send; None when it was not pending or the peer is
        closing (nothing to tell)."""
        if self._pending.pop(rid) is None or self.closing:
            return None
        return encode_notification(CANCEL_METHOD, {"requestId": rid})

    @staticmethod
    def send_notification(method: str, params: Any) -> bytes:
        """Return a notification frame; ``params=None`` omits ``params``."""
        return encode_notification(method, params)

    def send_response(self, request: Incoming, result: Any) -> bytes | None:
        """Answer ``request`` with ``result`` (``-32603`` if it cannot be encoded) and
        return the frame to write; None when it was answered already, or when it is part
        of a batch whose other requests are still unanswered."""
        if self._live.get(request.id) is not request:
            return None
        try:
            frame = encode_result(request.id, result)
        except (TypeError, ValueError, msgspec.EncodeError) as exc:
            logger.exception("%s: result for id %r is not encodable", self.name, request.id)
            frame = encode_error(request.id, internal_error(exc))
        return self._answer(request, frame)

    def send_error(self, request: Incoming, error: RequestError) -> bytes | None:
        """Answer ``request`` with ``error``; returns what :meth:`send_response` does."""
        if self._live.get(request.id) is not request:
            return None
        try:
            frame = encode_error(request.id, error)
        except (TypeError, ValueError, msgspec.EncodeError):  # unencodable ``data``
            frame = encode_error(request.id, RequestError(error.message, code=error.code))
        return self._answer(request, frame)

    def _answer(self, request: Incoming, frame: bytes) -> bytes | None:
        self._live.pop(request.id)
        batch = request.batch
        if batch is None:
            return frame
        batch.add(frame, answers_request=True)
        return batch.take()

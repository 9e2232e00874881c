"""An in-process link between a bridge and a runtime: no JSON-RPC between them.

:func:`inprocess_pair` returns two :class:`InProcessEnd` objects that stand where two
:class:`acp2.rpc.Connection` objects over a pipe would. The front bridge drives the
agent runtime over one (:func:`acp2.bridge.front.serve_v1_client`; the runtime serves
the other with :func:`acp2.agent.connection.serve_link`), and acp2's client drives the
back bridge over one (:func:`acp2.client.launch`'s v1 path). They offer the part of the
``Connection`` API those use, :class:`acp2.rpc.link.Link` (which the runtimes are typed
against: mypy checks a ``InProcessEnd`` is one), with the same meaning, and nothing is
framed, numbered or scheduled in between:

- ``call(spec, params)`` awaits the other end's handler for ``spec`` in the caller's task
  and returns its result object; a ``RequestError`` it raises reaches the caller as it
  is, any other exception becomes ``-32603`` (logged) by the function a ``Connection``
  answers it with (:func:`acp2.rpc.responder.handler_failed`);
  a method the other end does not serve goes to its unknown-request handler, else
  ``-32601``. Cancelling the caller cancels the handler (``$/cancel_request``'s effect).
- ``notify(spec, params)`` calls the other end's handler with the object (awaited when
  it returns an awaitable); unknown notifications are ignored.
- ``deliver(method, params, raw_params)`` is a notification whose params the sender
  has as bytes, or as an object, or both: the handler gets the object (decoded with its
  params type when there is none) and the bytes, if it registered ``raw=True`` (None
  when the sender has only the object: such a handler encodes it if it needs the
  bytes); its awaitable, if any, is returned for the sender to await before it sends
  on, as a ``Connection``'s reader awaits it before the next message.
- ``send_frame_nowait(frame)`` (the agent's emitter: a notification frame it holds as
  bytes only -- one of a replay read back from history, or fanned out to several
  clients) is read by the rpc reader (:func:`acp2.rpc.envelope.read`), its params
  decoded with the type the handler registered, and handled in the sender's call;
  such handlers must be plain functions (the producer applies the backpressure
  itself). The emitter hands every update it emits (and records) as the object
  instead to ``send_update_nowait`` once the other end sets one
  (``send_updates_through``: the front bridge's projection), so nothing it encodes is
  decoded again in this process.
- Flow control and the end of the link are ``flow``'s, the connection to the v1 peer
  that every message ends on: ``congested`` / ``drain()`` / ``closed`` /
  ``wait_closed()`` / ``aclose()``, its close reason, and flush hooks (the history
  store's commit), which run before its writes.

Only for two parts of this process: the objects handed over are not copied (the
senders hand over objects nothing else holds), and frames are what acp2's own encoder
wrote (they are still read by the rpc reader, never guessed).
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeVar

from msgspec import Raw

from acp2.errors import (
    ConnectionClosed,
    LocalProtocolError,
    MethodNotFound,
    RequestError,
)
from acp2.rpc.envelope import read
from acp2.rpc.messages import Notification
from acp2.rpc.responder import handler_failed
from acp2.schema.codec import decode, encode
from acp2.schema.methods import MethodSpec

__all__ = ["Flow", "InProcessEnd", "inprocess_pair"]

log = logging.getLogger("acp2.bridge")

P = TypeVar("P")
R = TypeVar("R")

_NULL = b"null"
Handler = Callable[..., Any]


class Flow(Protocol):
    """What both ends of a local pair borrow from the connection their output ends on
    (a :class:`acp2.rpc.Connection` is one)."""

    @property
    def closed(self) -> bool:
        """True once that connection is closing."""

    @property
    def close_reason(self) -> str | None:
        """Why we closed it, if we did."""

    @property
    def protocol_errors(self) -> int:
        """Invalid messages its peer sent."""

    @property
    def last_protocol_error(self) -> str | None:
        """The last of them."""

    @property
    def congested(self) -> bool:
        """True when a producer should ``await drain()`` now."""

    async def drain(self) -> None:
        """Wait until the producer may go on."""

    async def wait_closed(self) -> None:
        """Return once that connection has closed."""

    async def aclose(self) -> None:
        """Close that connection."""

    def coalesce_output(self) -> None:
        """Hold queued frames until the ready tasks have run once (a hint)."""

    def abandon(self, reason: str) -> None:
        """Give up on that connection's peer now (it closes with ``reason``)."""

    def add_flush_hook(self, hook: Callable[[], None]) -> None:
        """Call ``hook()`` right before each write."""


class InProcessEnd:
    """One end of :func:`inprocess_pair` (see the module)."""

    def __init__(self, name: str, flow: Flow) -> None:
        self.name = name
        self.flow = flow
        self.other: InProcessEnd = self
        self._requests: dict[str, Callable[[Any], Awaitable[Any]]] = {}
        #: Notification handlers by method: (params type, handler, wants raw params).
        self._notes: dict[str, tuple[Any, Handler, bool]] = {}
        self._unknown_request: Callable[[str, Raw | None], Awaitable[Any]] | None = None
        self._unknown_note: Callable[[str, Raw | None], Any] | None = None
        #: Set by :meth:`send_updates_through`; the agent's emitter looks for it.
        self.send_update_nowait: Callable[[str, Any, bytes], None] | None = None

    # -- registration (as on a Connection) ------------------------------------------------

    def on(self, spec: MethodSpec[Any, Any], handler: Handler) -> None:
        """Serve ``spec`` with ``handler`` (replacing any handler for its method)."""
        if spec.kind == "request":
            self._requests[spec.name] = handler
        else:
            self._notes[spec.name] = (spec.params_type, handler, False)

    def on_request(self, method: str, params_type: Any, handler: Handler) -> None:
        """Serve request ``method`` (its params arrive as the sender's objects)."""
        self._requests[method] = handler

    def on_notification(
        self, method: str, params_type: Any, handler: Handler, *, raw: bool = False
    ) -> None:
        """Handle notification ``method``; with ``raw``, as ``handler(params, raw)``."""
        self._notes[method] = (params_type, handler, raw)

    def on_unknown_request(self, handler: Callable[[str, Raw | None], Awaitable[Any]]) -> None:
        """Serve every request without a handler (default: ``-32601``)."""
        self._unknown_request = handler

    def on_unknown_notification(self, handler: Callable[[str, Raw | None], Any]) -> None:
        """Receive every notification without a handler (default: ignored)."""
        self._unknown_note = handler

    # -- outgoing -------------------------------------------------------------------------

    async def call(self, spec: MethodSpec[P, R], params: P, *, waiter: Any = None) -> R:
        """The other end's answer to ``spec`` with ``params`` (see the module). Served
        even once the flow connection closed (the bridge may finish an ``initialize``).
        ``waiter`` is resolved with ``(result, error)`` before this returns or raises."""
        try:
            result: R = await self._serve(spec.name, params)
        except RequestError as exc:
            _resolve(waiter, (None, exc))
            raise
        _resolve(waiter, (result, None))
        return result

    async def request(self, method: str, params: Any, result_type: type[R]) -> R:
        """:meth:`call` by wire name, the result read as ``result_type`` (extensions). A
        result the other end has as JSON bytes (a ``Raw``: a v1 agent's answer) is read
        once, and given as it is for ``Raw``; any other object is re-read through its
        encoding (the rare case of a typed answer read as another type)."""
        result = await self._serve(method, params)
        if type(result) is Raw:
            return result if result_type is Raw else decode(result, result_type)  # type: ignore[return-value]
        return decode(encode(result), result_type)

    async def _serve(self, method: str, params: Any) -> Any:
        other = self.other
        handler = other._requests.get(method)
        try:
            if handler is not None:
                return await handler(params)
            if other._unknown_request is None:
                raise MethodNotFound(f"Method not found: {method}")
            return await other._unknown_request(method, Raw(encode(params)))
        except (RequestError, ConnectionClosed):
            raise
        except Exception as exc:  # answered as a Connection answers it: one -32603
            raise handler_failed(exc, other.name, method) from None

    async def notify(self, spec: MethodSpec[Any, None] | str, params: Any) -> None:
        """Give ``params`` to the other end's handler for ``spec`` (awaited if it must be)."""
        pending = self.other._note(_name(spec), params, None)
        if pending is not None:
            await pending

    def send_notification_nowait(self, spec: MethodSpec[Any, None] | str, params: Any) -> None:
        """:meth:`notify` for a plain-function handler (an awaitable one is refused)."""
        _settle(_name(spec), self.other._note(_name(spec), params, None))

    def deliver(self, method: str, params: Any, raw_params: bytes | None) -> Awaitable[None] | None:
        """Hand a notification to the other end; what to await before the next one.
        ``params`` None: the other end decodes ``raw_params`` with its handler's type;
        ``raw_params`` None: the sender has only ``params`` (not both None)."""
        entry = self.other._notes.get(method)
        if entry is None:  # the hot path is below: one lookup, one call
            unknown = self.other._unknown_note
            if unknown is None:
                return None
            raw = encode(params) if raw_params is None else raw_params
            return unknown(method, Raw(raw))  # type: ignore[no-any-return]
        if params is None:
            assert raw_params is not None, "deliver() needs params or their bytes"
            params = decode(raw_params, entry[0])
        if entry[2]:
            return entry[1](params, raw_params)  # type: ignore[no-any-return]
        return entry[1](params)  # type: ignore[no-any-return]

    def send_frame_nowait(self, frame: bytes) -> None:
        """Hand one encoded notification frame to the other end (see the module);
        ``ConnectionClosed`` once the flow connection is closing (the frame is dropped)."""
        self.hand_over(frame)

    def send_updates_through(self, take: Callable[[str, Any, bytes], None]) -> None:
        """Make ``take(session_id, update, frame)`` this end's ``send_update_nowait``: the
        agent's emitter then hands each update it emits as the object (with its encoded
        frame) to ``take``, in its call, instead of a frame to decode. ``take`` raises
        ``ConnectionClosed`` once the flow connection is closing, as
        :meth:`send_frame_nowait` does."""
        self.send_update_nowait = take

    def hand_over(self, frame: bytes) -> None:
        """The frame decoded and handled by the other end in this call (what
        :meth:`send_frame_nowait` does when no relay stands in for it)."""
        other = self.other
        if self.flow.closed:
            raise ConnectionClosed(f"{self.name}: the connection is closed")
        message = read(frame).message
        if type(message) is not Notification:
            raise LocalProtocolError(f"{self.name}: only notification frames are handed over")
        assert isinstance(message, Notification)
        other._frame(message.method, _NULL if message.params is None else bytes(message.params))

    # -- flow (the v1 connection's) -------------------------------------------------------

    @property
    def closed(self) -> bool:
        """True once the connection the messages end on is closing."""
        return self.flow.closed

    @property
    def close_reason(self) -> str | None:
        """The flow connection's close reason."""
        return self.flow.close_reason

    @property
    def protocol_errors(self) -> int:
        """Invalid messages the flow connection's peer sent."""
        return self.flow.protocol_errors

    @property
    def last_protocol_error(self) -> str | None:
        """The last of them."""
        return self.flow.last_protocol_error

    @property
    def congested(self) -> bool:
        """True when a producer should ``await drain()`` now."""
        return self.flow.congested

    async def drain(self) -> None:
        """Wait until the producer may go on."""
        await self.flow.drain()

    async def wait_closed(self) -> None:
        """Return once the flow connection has closed."""
        await self.flow.wait_closed()

    async def aclose(self) -> None:
        """Close the flow connection: the link ends with it."""
        await self.flow.aclose()

    def coalesce_output(self) -> None:
        """The flow connection's output coalescing hint."""
        self.flow.coalesce_output()

    def add_flush_hook(self, hook: Callable[[], None]) -> None:
        """Run ``hook()`` before each write of the flow connection."""
        self.flow.add_flush_hook(hook)

    def abandon(self, reason: str) -> None:
        """Give up on the flow connection's peer (the one every message ends on)."""
        self.flow.abandon(reason)

    # -- receiving ------------------------------------------------------------------------

    def _note(self, method: str, params: Any, raw: bytes | None) -> Any:
        entry = self._notes.get(method)
        if entry is not None:
            if entry[2]:
                return entry[1](params, encode(params) if raw is None else raw)
            return entry[1](params)
        if self._unknown_note is not None:
            return self._unknown_note(method, Raw(encode(params) if raw is None else raw))
        return None

    def _frame(self, method: str, params: bytes) -> None:
        entry = self._notes.get(method)
        try:
            value = Raw(params) if entry is None else decode(params, entry[0])
            _settle(method, self._note(method, value, params))
        except ConnectionClosed:
            raise  # the sender's own concern (the emitter drops the frame)
        except Exception:  # as a Connection's reader does: the sender never sees it
            log.exception("%s: notification handler for %s failed", self.name, method)


def _name(spec: MethodSpec[Any, Any] | str) -> str:
    return spec if isinstance(spec, str) else spec.name


def _resolve(waiter: Any, value: Any) -> None:
    if waiter is not None and not waiter.done():
        waiter.set_result(value)


def _settle(method: str, pending: object) -> None:
    """Refuse an awaitable from a handler called where nothing can await it."""
    if pending is not None:
        if inspect.iscoroutine(pending):
            pending.close()
        raise LocalProtocolError(f"{method}: this handler must be a plain function")


def inprocess_pair(
    flow: Flow, names: tuple[str, str] = ("agent", "client")
) -> tuple[InProcessEnd, InProcessEnd]:
    """Two joined ends over ``flow`` (see the module): the first named ``names[0]``."""
    first, second = InProcessEnd(names[0], flow), InProcessEnd(names[1], flow)
    first.other, second.other = second, first
    return first, second

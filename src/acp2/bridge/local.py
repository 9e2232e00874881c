"""An in-process link between the front bridge and the agent runtime: no JSON-RPC between.

:func:`local_pair` returns two :class:`LocalEnd` objects that stand where two
:class:`acp2.rpc.Connection` objects over a pipe would: the agent runtime serves one
(:func:`acp2.agent.connection.serve_link`), the front bridge drives the other
(:func:`acp2.bridge.front.serve_v1_client`). They offer the part of the ``Connection``
API those two use, with the same meaning, and nothing is framed, numbered or scheduled
in between:

- ``call(spec, params)`` awaits the other end's handler for ``spec`` in the caller's task
  and returns its result object; a ``RequestError`` it raises reaches the caller as it
  is, any other exception becomes ``-32603`` (logged), as a ``Connection`` answers it;
  a method the other end does not serve goes to its unknown-request handler, else
  ``-32601``. Cancelling the caller cancels the handler (``$/cancel_request``'s effect).
- ``notify(spec, params)`` calls the other end's handler with the object (awaited when
  it is a coroutine function); unknown notifications are ignored.
- ``send_frame_nowait(frame)`` (the agent's emitter: one encoded ``session/update``
  frame) is offered to the other end's ``frame_filter`` first (the front bridge passes
  plain text chunks to the v1 client as the same bytes), else decoded with the method
  table's params type and given to the notification handler, in the sender's call.
  Such handlers must be plain functions: the producer applies the backpressure itself.
- Flow control is the v1 client's: both ends report ``congested`` / ``drain()`` /
  ``closed`` / ``wait_closed()`` of ``flow`` (the v1 connection every frame ends up on),
  and flush hooks (the history store's commit) run before its writes.

Only for two parts of this process: the objects handed over are not copied, and frames
are trusted to be what acp2's own encoder wrote (they are still decoded, never guessed).
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeVar

import msgspec
from msgspec import Raw

from acp2.errors import (
    ConnectionClosed,
    InternalError,
    LocalProtocolError,
    MethodNotFound,
    RequestError,
)
from acp2.rpc.messages import SESSION_UPDATE_PREFIX
from acp2.rpc.peer import one_line
from acp2.schema.codec import decode, encode
from acp2.schema.methods import SESSION_UPDATE, MethodSpec

__all__ = ["Flow", "LocalEnd", "local_pair"]

log = logging.getLogger("acp2.bridge")

P = TypeVar("P")
R = TypeVar("R")

_PARAMS_AT = len(SESSION_UPDATE_PREFIX)


class Flow(Protocol):
    """What both ends of a local pair borrow from the connection their output ends on."""

    @property
    def closed(self) -> bool:
        """True once that connection is closing."""

    @property
    def congested(self) -> bool:
        """True when a producer should ``await drain()`` now."""

    async def drain(self) -> None:
        """Wait until the producer may go on."""

    async def wait_closed(self) -> None:
        """Return once that connection has closed."""

    def coalesce_output(self) -> None:
        """Hold queued frames until the ready tasks have run once (a hint)."""

    def add_flush_hook(self, hook: Callable[[], None]) -> None:
        """Call ``hook()`` right before each write."""


class LocalEnd:
    """One end of :func:`local_pair` (see the module). ``frame_filter``, when set, is
    offered every frame the other end sends first; True means it took the frame."""

    def __init__(self, name: str, flow: Flow) -> None:
        self.name = name
        self.flow = flow
        self.other: LocalEnd = self
        self.frame_filter: Callable[[bytes], bool] | None = None
        self._requests: dict[str, Callable[[Any], Awaitable[Any]]] = {}
        self._notes: dict[str, tuple[Any, Callable[[Any], Any]]] = {}
        self._unknown_request: Callable[[str, Raw | None], Awaitable[Any]] | None = None
        self._unknown_note: Callable[[str, Raw | None], Any] | None = None

    # -- registration (as on a Connection) ------------------------------------------------

    def on(self, spec: MethodSpec[Any, Any], handler: Callable[[Any], Any]) -> None:
        """Serve ``spec`` with ``handler`` (replacing any handler for its method)."""
        if spec.kind == "request":
            self._requests[spec.name] = handler
        else:
            self._notes[spec.name] = (spec.params_type, handler)

    def on_unknown_request(self, handler: Callable[[str, Raw | None], Awaitable[Any]]) -> None:
        """Serve every request without a handler (default: ``-32601``)."""
        self._unknown_request = handler

    def on_unknown_notification(self, handler: Callable[[str, Raw | None], Any]) -> None:
        """Receive every notification without a handler (default: ignored)."""
        self._unknown_note = handler

    # -- outgoing -------------------------------------------------------------------------

    async def call(self, spec: MethodSpec[P, R], params: P) -> R:
        """The other end's answer to ``spec`` with ``params`` (see the module). Served
        even once the flow connection closed (the bridge may finish an ``initialize``)."""
        other = self.other
        handler = other._requests.get(spec.name)
        try:
            if handler is not None:
                result: R = await handler(params)
                return result
            if other._unknown_request is None:
                raise MethodNotFound(f"Method not found: {spec.name}")
            unknown: R = await other._unknown_request(spec.name, Raw(encode(params)))
            return unknown
        except (RequestError, ConnectionClosed):
            raise
        except Exception as exc:
            log.exception("%s: request handler for %s failed", other.name, spec.name)
            raise InternalError(one_line(exc)) from None

    async def notify(self, spec: MethodSpec[Any, None], params: Any) -> None:
        """Give ``params`` to the other end's handler for ``spec`` (awaited if it must be)."""
        pending = self.other._note(spec.name, params)
        if pending is not None:
            await pending

    def send_notification_nowait(self, spec: MethodSpec[Any, None], params: Any) -> None:
        """:meth:`notify` for a plain-function handler (a coroutine one is refused)."""
        self.other._note_now(spec.name, params)

    def send_frame_nowait(self, frame: bytes) -> None:
        """Hand one encoded notification frame to the other end (see the module);
        ``ConnectionClosed`` once the flow connection is closing (the frame is dropped)."""
        self._check_open()
        other = self.other
        take = other.frame_filter
        if take is not None and take(frame):
            return
        if frame.startswith(SESSION_UPDATE_PREFIX):
            other._frame(SESSION_UPDATE.name, frame[_PARAMS_AT:-1])
        else:
            envelope = decode(frame, _Envelope)
            other._frame(envelope.method, bytes(envelope.params))

    # -- flow (the v1 connection's) -------------------------------------------------------

    @property
    def closed(self) -> bool:
        """True once the connection the output ends on is closing."""
        return self.flow.closed

    @property
    def congested(self) -> bool:
        """True when a producer should ``await drain()`` now."""
        return self.flow.congested

    async def drain(self) -> None:
        """Wait until the producer may go on."""
        await self.flow.drain()

    async def wait_closed(self) -> None:
        """Return once the connection the output ends on has closed."""
        await self.flow.wait_closed()

    def coalesce_output(self) -> None:
        """The flow connection's output coalescing hint."""
        self.flow.coalesce_output()

    def add_flush_hook(self, hook: Callable[[], None]) -> None:
        """Run ``hook()`` before each write of the flow connection."""
        self.flow.add_flush_hook(hook)

    # -- receiving ------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self.flow.closed:
            raise ConnectionClosed(f"{self.name}: the connection is closed")

    def _note(self, method: str, params: Any) -> Awaitable[None] | None:
        entry = self._notes.get(method)
        if entry is not None:
            result: Awaitable[None] | None = entry[1](params)
            return result
        if self._unknown_note is not None:
            unknown: Awaitable[None] | None = self._unknown_note(method, Raw(encode(params)))
            return unknown
        return None

    def _note_now(self, method: str, params: Any) -> None:
        _settle(method, self._note(method, params))

    def _frame(self, method: str, params: bytes) -> None:
        entry = self._notes.get(method)
        if entry is None:
            if self._unknown_note is not None:
                _settle(method, self._unknown_note(method, Raw(params)))
            return
        try:
            self._note_now(method, decode(params, entry[0]))
        except ConnectionClosed:
            raise  # the sender's own concern (the emitter drops the frame)
        except Exception:  # as a Connection's reader does: the sender never sees it
            log.exception("%s: notification handler for %s failed", self.name, method)


class _Envelope(msgspec.Struct):
    """A notification frame other than ``session/update``: its method, params unread."""

    method: str
    params: Raw = Raw(b"null")


def _settle(method: str, pending: object) -> None:
    """Refuse an awaitable from a handler called where nothing can await it."""
    if pending is not None:
        if inspect.iscoroutine(pending):
            pending.close()
        raise LocalProtocolError(f"{method}: this handler must be a plain function")


def local_pair(
    flow: Flow, names: tuple[str, str] = ("agent", "client")
) -> tuple[LocalEnd, LocalEnd]:
    """Two joined ends over ``flow`` (see the module): give the first to the agent runtime
    and drive it with the second."""
    first, second = LocalEnd(names[0], flow), LocalEnd(names[1], flow)
    first.other, second.other = second, first
    return first, second

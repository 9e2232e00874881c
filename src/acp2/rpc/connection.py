"""The JSON-RPC 2.0 connection: one :class:`Connection` per transport, symmetric for both
roles -- a thin async shell around the sans-IO :class:`~acp2.rpc.peer.Peer`.

The peer holds every protocol rule (ids, exactly-once answers, cancellation, late
responses, error replies, batches); the shell feeds it what the transport delivers and
does what its events say (:class:`~acp2.rpc.dispatch.Dispatcher`): notification handlers
inline and in arrival order (a coroutine one is awaited before the next message, so a
response is delivered only after every notification received before it was handled),
one asyncio task per inbound request, each in its own cancel scope, tracked and awaited
on exit. Output goes through the :class:`~acp2.rpc.outbox.Outbox` (one writer task).

Reading is the :class:`~acp2.rpc.reader.Reader`'s: a transport hands it a byte stream
(``receive``, or ``pump`` in the loop's readiness callback) or whole messages
(``receive_message``, as remote transports deliver them); either way the same peer reads
them. It stops reading from a peer that leaves more than ``max_unread`` bytes of our
output unread, and closes the connection (:attr:`Connection.close_reason` says why) when
that peer takes none of it for ``stall_timeout`` seconds.

acp2 runs on asyncio (uvloop too); entering a Connection under another backend raises
:class:`~acp2.errors.LocalProtocolError` at once. The asyncio-specific hot paths are in
:mod:`acp2._aio`. Over a transport that supports it, chunks are consumed right in the
loop's readiness callback (the reader task sleeps unless a message needs awaiting) and
a frame queued while idle is written in the same step.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import TYPE_CHECKING, Any, Final, Literal, TypeVar, overload

import anyio
import msgspec
from anyio.abc import TaskGroup
from anyio.lowlevel import checkpoint_if_cancelled
from msgspec import Raw

from acp2 import _aio
from acp2._groups import leaves
from acp2.errors import ConnectionClosed, LocalProtocolError, RemoteProtocolError, summarize
from acp2.rpc.dispatch import REQUEST_BURST, Dispatcher, UnknownNotificationHandler
from acp2.rpc.events import Tap
from acp2.rpc.framing import DEFAULT_MAX_MESSAGE_SIZE
from acp2.rpc.later import Later
from acp2.rpc.messages import TOO_DEEP
from acp2.rpc.outbox import DEFAULT_HIGH_WATER, FLUSH_SIZE, Outbox
from acp2.rpc.peer import Peer
from acp2.rpc.reader import MessageReceive, Reader
from acp2.schema.codec import decode
from acp2.schema.methods import MethodSpec

if TYPE_CHECKING:  # an annotation only: the shell needs no transport module at run time
    from acp2.transport.base import Transport

__all__ = ["REQUEST_BURST", "Connection", "MessageReceive"]

logger = logging.getLogger("acp2.rpc")

P = TypeVar("P")
R = TypeVar("R")

#: How long a graceful close waits for cancelled handlers to answer and output to drain.
CLOSE_TIMEOUT = 5.0

#: A pending request's waiter (:func:`acp2._aio.new_waiter`): resolved with
#: ``(result, None)`` or ``(None, error)``, never with an exception.
_Waiter = _aio.Waiter[tuple[Raw | None, Exception | None]]

#: ``congested`` turns true after this many bytes were queued without a ``drain()``: a
#: producer then yields once per direct write (256 KiB ~ 1100 small updates, ~3 ms).
YIELD_BYTES: Final = FLUSH_SIZE

#: Stop reading from the peer while more than this many bytes of our output are unread:
#: 4x the notification high-water mark, so a peer that is merely slow never hits it.
DEFAULT_MAX_UNREAD: Final = 16 * 1024 * 1024

#: Close the connection when a peer over ``max_unread`` takes none of our output for this
#: many seconds.
DEFAULT_STALL_TIMEOUT: Final = 60.0


class Connection:
    """A JSON-RPC 2.0 peer over a :class:`~acp2.transport.base.Transport`.

    Use as ``async with Connection(transport) as conn:`` (on asyncio). Register handlers
    with :meth:`on_request` / :meth:`on_notification` / :meth:`on` (before or after
    entering). ``tap``, when given, sees every frame read (``"in"``) and written
    (``"out"``), for validation. ``max_unread`` and ``stall_timeout`` bound a peer that
    does not read (module docstring).
    Guarantees are listed in ``docs/internals.md``; the main ones are tested in
    ``tests/rpc``.
    """

    def __init__(
        self,
        transport: Transport,
        *,
        name: str = "peer",
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
        tap: Tap | None = None,
        high_water: int = DEFAULT_HIGH_WATER,
        max_unread: int = DEFAULT_MAX_UNREAD,
        stall_timeout: float = DEFAULT_STALL_TIMEOUT,
    ) -> None:
        self.name = name
        self._transport = transport
        self._tap = tap
        #: (high_water, max_unread, stall_timeout), for the Outbox made on entering. Few
        #: attributes: past 30, CPython 3.11 instance dicts stop sharing keys (slower).
        self._limits = (high_water, max_unread, stall_timeout)
        self._close_reason: str | None = None
        self._peer: Peer[_Waiter] = Peer(name, max_message_size=max_message_size, tap=tap)
        self._dispatcher = Dispatcher(self._peer, self._put, self._after_burst, self._on_crash)
        self._tg: TaskGroup | None = None
        #: The first request handler task that crashed (see ``_on_crash``).
        self._crash: BaseException | None = None
        self._reader_scope = anyio.CancelScope()
        self._writer_scope = anyio.CancelScope()
        self._reader_task: _aio.Task[Any] | None = None
        self._aclosing = False
        self._notified = 0
        self._hooks: list[Callable[[], None]] = []
        self._closed_event: anyio.Event | None = None
        self._done_event: anyio.Event | None = None

    # --- lifecycle ----------------------------------------------------------------

    async def __aenter__(self) -> Connection:
        """Start the reader and writer tasks; returns self. Raises
        :class:`~acp2.errors.LocalProtocolError` when not running on asyncio."""
        _aio.require_asyncio()
        if self._tg is not None:
            raise LocalProtocolError("a Connection can be entered only once")
        self._closed_event = anyio.Event()
        self._done_event = anyio.Event()
        self._outbox = Outbox(
            self._transport,
            on_broken=self._begin_close,
            tap=self._tap,
            high_water=self._limits[0],
            max_unread=self._limits[1],
        )
        for hook in self._hooks:
            self._outbox.add_flush_hook(hook)
        self._reader = Reader(
            self._transport,
            self._peer,
            self._dispatcher,
            self._outbox,
            stall_timeout=self._limits[2],
            on_stall=self._stalled,
        )
        tg = self._tg = await _aio.open_task_group()
        tg.start_soon(self._write_loop, name=f"acp2 writer ({self.name})")
        tg.start_soon(self._read_loop, name=f"acp2 reader ({self.name})")
        # What is sent right after entering goes out once the reader has started: what a
        # peer that is already gone wrote (e.g. why it failed) is read before our first
        # write can fail on its closed pipe and close the connection.
        self._outbox.coalesce()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        """Close (see :meth:`aclose`) and wait for every task of the connection."""
        assert self._tg is not None
        try:
            await self.aclose()
        finally:
            await self._dispatcher.wait_tasks()
            try:
                result = await self._tg.__aexit__(exc_type, exc, tb)
            except BaseExceptionGroup as group:
                # Callers see the exception their own code raised, not a task-group wrapper.
                found = leaves(group)
                if exc is not None and all(leaf is exc for leaf in found):
                    return False
                if len(found) == 1:
                    raise found[0] from None
                raise
        if self._crash is not None:
            raise self._crash
        return result

    @property
    def closed(self) -> bool:
        """True once the connection is closing or closed (no new requests are accepted)."""
        return self._peer.closing

    @property
    def close_reason(self) -> str | None:
        """Why *we* closed the connection because of the peer or a failure (e.g. it left
        our output unread too long); None while open, or when the peer ended the stream or
        :meth:`aclose` was called."""
        return self._close_reason

    @property
    def last_protocol_error(self) -> str | None:
        """What was wrong with the last invalid message the peer sent (None if none was),
        e.g. ``"Parse error: ..."``; with :attr:`protocol_errors`, for error messages."""
        return self._peer.last_protocol_error

    @property
    def protocol_errors(self) -> int:
        """How many invalid messages the peer sent (each answered or logged, then dropped)."""
        return self._peer.protocol_errors

    @property
    def ignored_fields(self) -> Counter[str]:
        """Keys the peer sent that decoding skipped, by ``"method path"`` (e.g.
        ``"session/update update.usage.reasoningTokens"``), counted per message. Checked
        only while debug logging is on for ``acp2.rpc`` (each new one is logged there);
        empty otherwise."""
        return self._peer.ignored.counts

    def check_ignored(self, method: str, data: bytes | Raw, tp: Any) -> None:
        """Count and log (debug) the keys of ``data``, a message of ``method`` from the
        peer that the caller decoded itself as ``tp``, that decoding skipped; a no-op
        unless debug logging is on (see :attr:`ignored_fields`)."""
        if self._peer.ignored.enabled:
            self._peer.ignored.check(method, data, tp)

    async def wait_closed(self) -> None:
        """Return once the connection is closed: peer gone, transport broken, or aclose."""
        if self._closed_event is None:
            raise LocalProtocolError("the Connection was not entered")
        await self._closed_event.wait()

    async def aclose(self) -> None:
        """Close gracefully and idempotently.

        Pending :meth:`request` calls raise ``ConnectionClosed``; handlers still running
        are cancelled and answered ``-32800`` (TR-23); queued output is flushed (bounded
        by :data:`CLOSE_TIMEOUT`); then the transport is closed.
        """
        if self._done_event is None:
            await self._transport.aclose()
            return
        if self._aclosing:
            await self._done_event.wait()
            return
        self._aclosing = True
        self._begin_close()
        with anyio.CancelScope(shield=True):
            with anyio.move_on_after(CLOSE_TIMEOUT):
                await self._dispatcher.responder.wait_idle()
                await self._outbox.flush()
            self._outbox.finish()
            await self._transport.aclose()
            # Not the task group's scope: it also covers the body of ``async with``.
            self._writer_scope.cancel()
            self._done_event.set()

    def _begin_close(self) -> None:
        """Synchronously: refuse new work, fail waiters, cancel handlers, stop reading."""
        if self._peer.closing:
            return
        self._reader_scope.cancel()
        closed = ConnectionClosed(f"connection to {self.name} closed")
        for waiter in self._peer.close():
            _aio.resolve(waiter, (None, closed))
        self._dispatcher.abandon(closed)
        assert self._closed_event is not None
        self._closed_event.set()

    # --- registration ---------------------------------------------------------------

    def on_request(
        self, method: str, params_type: type[P], handler: Callable[[P], Awaitable[Any]]
    ) -> None:
        """Serve ``method``: params are decoded as ``params_type`` (``-32602`` if they do
        not fit) and the handler's return value is the result -- or, when it returns a
        :class:`~acp2.rpc.later.Later`, what that is resolved with. Replaces any handler."""
        self._peer.serve(method, params_type, handler)

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
        self._peer.route(method, params_type, handler, raw)

    @overload
    def on(
        self, spec: MethodSpec[P, None], handler: Callable[[P], Awaitable[None] | None]
    ) -> None: ...
    @overload
    def on(
        self, spec: MethodSpec[P, R], handler: Callable[[P], Awaitable[R | Later[R]]]
    ) -> None: ...
    def on(self, spec: MethodSpec[P, Any], handler: Callable[[P], Any]) -> None:
        """Handle the method ``spec`` (a method table entry): a request's handler returns
        its result (:meth:`on_request`), or a :class:`~acp2.rpc.later.Later` it resolves
        afterwards; a notification's is called in arrival order
        (:meth:`on_notification`). Replaces any handler for the method."""
        if spec.kind == "request":
            self.on_request(spec.name, spec.params_type, handler)
        else:
            self.on_notification(spec.name, spec.params_type, handler)

    def on_unknown_request(self, handler: Callable[[str, Raw | None], Awaitable[Any]]) -> None:
        """Serve every request without a registered handler (default: ``-32601``).

        The handler gets the method and raw params; it may raise ``MethodNotFound``."""
        self._peer.serve_unknown(handler)

    def on_unknown_notification(self, handler: UnknownNotificationHandler) -> None:
        """Receive every notification without a registered handler (default: ignored)."""
        self._dispatcher.unknown_notification = handler

    # --- outgoing -----------------------------------------------------------------

    async def request(
        self, method: str, params: Any, result_type: type[R], *, waiter: _Waiter | None = None
    ) -> R:
        """Send a request and return its result decoded as ``result_type``.

        Raises the :class:`~acp2.errors.RequestError` subclass matching an error
        response (``remote=True``), :class:`~acp2.errors.RemoteProtocolError` for a
        malformed result, :class:`~acp2.errors.ConnectionClosed` when the connection
        closes first. If the calling task is cancelled, ``$/cancel_request`` is sent and
        the late response is dropped. ``params=None`` omits ``params``.

        ``waiter`` (from :func:`acp2._aio.new_waiter`) is resolved by the reader the
        moment the response is dispatched, before this call returns: a caller that must
        place the response among the notifications read with it checks ``waiter.done()``.
        """
        self._check_open()
        if self._reader_task is not None and _aio.current_task() is self._reader_task:
            raise LocalProtocolError("request() inside a notification handler would deadlock")
        if waiter is None:
            waiter = _aio.new_waiter()
        rid, frame = self._peer.send_request(method, params, waiter)
        self._outbox.put(frame)
        try:
            if self._outbox.over_high_water:
                await self._outbox.wait_drained()
            result, error = await waiter
        except anyio.get_cancelled_exc_class():
            cancel = self._peer.cancel_request(rid)
            if cancel is not None:
                self._outbox.put(cancel)
            raise
        if error is not None:
            raise error
        assert result is not None
        try:
            decoded = decode(result, result_type)
        except msgspec.ValidationError as exc:
            raise RemoteProtocolError(f"malformed result for {method}: {exc}") from exc
        except RecursionError as exc:
            raise RemoteProtocolError(f"malformed result for {method}: {TOO_DEEP}") from exc
        self.check_ignored(method, result, result_type)
        return decoded

    async def call(self, spec: MethodSpec[P, R], params: P, *, waiter: _Waiter | None = None) -> R:
        """Send the request ``spec`` (a method table entry) and return its typed result.

        ``request(spec.name, params, spec.result_type)``: same errors, cancellation and
        ``waiter``."""
        result: R = await self.request(spec.name, params, spec.result_type, waiter=waiter)
        return result

    async def notify(self, method: str | MethodSpec[Any, None], params: Any) -> None:
        """Queue a notification (``method``: a wire name or a method table entry); waits
        while the outgoing buffer is over the high-water mark.

        It yields to other tasks only when it waits, so a burst of notifications is
        coalesced into few writes; a cancelled caller is still stopped within a few dozen
        calls. Raises ``ConnectionClosed`` once the connection is closing.
        """
        self._notified += 1
        if not self._notified & 31:  # the check costs more than the send: amortize it
            await checkpoint_if_cancelled()
        self.send_notification_nowait(method, params)
        if self._outbox.over_high_water:
            await self._outbox.wait_drained()

    def send_notification_nowait(self, method: str | MethodSpec[Any, None], params: Any) -> None:
        """Queue a notification without waiting (hot path; no backpressure). ``method`` is a
        wire name or a method table entry.

        Raises ``ConnectionClosed`` once the connection is closing.
        """
        self._check_open()
        name = method if isinstance(method, str) else method.name
        self._outbox.put(self._peer.send_notification(name, params))

    def send_frame_nowait(self, frame: bytes) -> None:
        """Queue one complete, pre-encoded notification frame (no trailing newline).

        For hot paths that build frames by byte concatenation; nothing is validated but
        the absence of raw newlines (``LocalProtocolError``). Raises ``ConnectionClosed``
        once the connection is closing.
        """
        self._check_open()
        if 10 in frame:  # b"\n"; an int is found without the failed int() a bytes needle costs
            raise LocalProtocolError("a frame must not contain a raw newline")
        self._outbox.put(frame)

    def send_frames_nowait(self, frames: bytes) -> None:
        """Queue complete, pre-encoded frames joined by newlines (no trailing newline), as
        one unit: for a relay passing whole lines through (the in-process v1 bridge).
        Nothing is validated, and a tap sees them as one ``"out"`` item. Raises
        ``ConnectionClosed`` once the connection is closing."""
        self._check_open()
        self._outbox.put(frames)

    def coalesce_output(self) -> None:
        """Hold frames queued from now until the tasks and callbacks ready now have run
        once, then write them together: call it right after starting a task that sends at
        once (e.g. a prompt's turn), so that its first frames and the current handler's
        answer share one write and one wake-up of the peer. Only a hint: a no-op over a
        transport without direct writes."""
        if self._tg is not None:
            self._outbox.coalesce()

    @property
    def congested(self) -> bool:
        """True when a producer should ``await drain()`` now: the outgoing buffer is above
        the high-water mark, or it queued :data:`YIELD_BYTES` since it last let other
        tasks run (a handler streaming in a tight loop would otherwise keep the reader
        from seeing ``session/cancel``)."""
        outbox = self._outbox
        return outbox.over_high_water or outbox.unyielded >= YIELD_BYTES

    @property
    def lagging(self) -> bool:
        """True while more than the high-water mark of output is queued for the peer (it
        reads slower than we write); one attribute test, for per-message checks."""
        return self._tg is not None and self._outbox.over_high_water

    def abandon(self, reason: str) -> None:
        """Give up on the peer now (e.g. it fell too far behind): queued output is
        dropped, pending requests fail with ``ConnectionClosed``, and the connection
        closes with ``close_reason`` = ``reason``. A no-op once closing."""
        if self._tg is not None and not self._peer.closing:
            self._stalled(reason, self._outbox)

    async def drain(self) -> None:
        """Return once the outgoing buffer is at or below the high-water mark, having let
        the other tasks (reader, writer) run at least once."""
        outbox = self._outbox
        outbox.yielded()
        if outbox.over_high_water:
            await outbox.wait_drained()
        else:
            outbox.write_queued()
            await _aio.yield_once()
            outbox.coalesce()

    def add_flush_hook(self, hook: Callable[[], None]) -> None:
        """Call ``hook()`` (synchronously, in the writer) right before each write.

        Lets a history store commit exactly what is about to be sent. A failing hook is
        logged; the write goes ahead.
        """
        self._hooks.append(hook)
        if self._tg is not None:
            self._outbox.add_flush_hook(hook)

    def _check_open(self) -> None:
        if self._tg is None:
            raise LocalProtocolError("use the Connection as 'async with Connection(...)'")
        if self._peer.closing:
            raise ConnectionClosed(f"connection to {self.name} is closed")

    def _put(self, frame: bytes) -> None:
        self._outbox.put(frame)

    # --- incoming -----------------------------------------------------------------

    async def _write_loop(self) -> None:
        with self._writer_scope:
            await self._outbox.run()

    async def _read_loop(self) -> None:
        self._reader_task = _aio.current_task()
        _aio.name_asyncio_for_callbacks()  # the reader's callbacks handle messages
        try:
            with self._reader_scope:
                await self._reader.run()
        except Exception as exc:
            logger.exception("%s: reader failed; closing the connection", self.name)
            self._close_reason = f"reading failed: {summarize(exc)}"
        finally:
            self._begin_close()

    async def _after_burst(self) -> None:
        await self._reader.after_burst()

    def _stalled(self, reason: str, outbox: Outbox) -> None:
        """The peer left our output unread too long: the reader gives up on it."""
        self._close_reason = reason
        # A transport that can tell its peer why (a remote connection's close frame) does.
        tell = getattr(self._transport, "closing_because", None)
        if tell is not None:
            tell(reason)
        outbox.abandon(reason)  # frees it, and closing need not wait to flush it
        self._begin_close()

    def _on_crash(self, exc: BaseException) -> None:
        """A request handler task ended with e.g. ``KeyboardInterrupt``: re-raise it from
        ``__aexit__``, and cancel everything."""
        if self._crash is None:
            self._crash = exc
            if self._tg is not None:
                self._tg.cancel_scope.cancel()

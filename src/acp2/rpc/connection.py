"""The JSON-RPC 2.0 peer: one :class:`Connection` per transport, symmetric for both roles.

Structure (anyio): a task group per connection holding one reader task, one writer task
(:class:`~acp2.rpc.outbox.Outbox`) and one task per inbound request, each with its own
cancel scope. The reader reads big chunks, splits lines with the sans-IO
:class:`~acp2.rpc.framing.LineFramer`, parses envelopes with
:func:`~acp2.rpc.messages.parse_frame` and dispatches in arrival order; notification
handlers are awaited inline, so a response is delivered only after every notification
received before it was handled. Inbound dispatch lives in :mod:`acp2.rpc.inbound`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from types import TracebackType
from typing import Any, TypeVar

import anyio
import msgspec
from anyio.abc import TaskGroup
from anyio.lowlevel import checkpoint_if_cancelled

from acp2.errors import ConnectionClosed, LocalProtocolError, RemoteProtocolError
from acp2.rpc.framing import DEFAULT_MAX_MESSAGE_SIZE
from acp2.rpc.inbound import Inbound
from acp2.rpc.messages import CANCEL_METHOD, encode_notification, encode_request
from acp2.rpc.outbox import DEFAULT_HIGH_WATER, Outbox, Tap
from acp2.rpc.pending import PendingRequests
from acp2.schema.codec import decode
from acp2.transport.base import Transport

__all__ = ["Connection"]

logger = logging.getLogger("acp2.rpc")

P = TypeVar("P")
R = TypeVar("R")

#: How long a graceful close waits for cancelled handlers to answer and output to drain.
CLOSE_TIMEOUT = 5.0


class _Waiter:
    __slots__ = ("error", "event", "result")

    def __init__(self) -> None:
        self.event = anyio.Event()
        self.result: msgspec.Raw | None = None
        self.error: Exception | None = None


class Connection(Inbound):
    """A JSON-RPC 2.0 peer over a :class:`~acp2.transport.base.Transport`.

    Use as ``async with Connection(transport) as conn:``. Register handlers with
    :meth:`on_request` / :meth:`on_notification` (before or after entering). ``tap``,
    when given, sees every frame read (``"in"``) and written (``"out"``), for validation.
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
    ) -> None:
        super().__init__(name=name, max_message_size=max_message_size, tap=tap)
        self._transport = transport
        self._high_water = high_water
        self._pending: PendingRequests[_Waiter] = PendingRequests()
        self._tg: TaskGroup | None = None
        self._reader_scope = anyio.CancelScope()
        self._writer_scope = anyio.CancelScope()
        self._reader_task: int | None = None
        self._closing = False
        self._aclosing = False
        self._notified = 0
        self._hooks: list[Callable[[], None]] = []
        self._closed_event: anyio.Event | None = None
        self._done_event: anyio.Event | None = None

    # --- lifecycle ----------------------------------------------------------------

    async def __aenter__(self) -> Connection:
        """Start the reader and writer tasks; returns self."""
        if self._tg is not None:
            raise LocalProtocolError("a Connection can be entered only once")
        self._closed_event = anyio.Event()
        self._done_event = anyio.Event()
        self._outbox = Outbox(
            self._transport, on_broken=self._begin_close, tap=self._tap, high_water=self._high_water
        )
        for hook in self._hooks:
            self._outbox.add_flush_hook(hook)
        tg = anyio.create_task_group()
        await tg.__aenter__()
        self._tg = tg
        tg.start_soon(self._write_loop, name=f"acp2 writer ({self.name})")
        tg.start_soon(self._read_loop, name=f"acp2 reader ({self.name})")
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
            try:
                result = await self._tg.__aexit__(exc_type, exc, tb)
            except BaseExceptionGroup as group:
                # Callers see the exception their own code raised, not a task-group wrapper.
                leaves = _leaves(group)
                if exc is not None and all(leaf is exc for leaf in leaves):
                    return False
                if len(leaves) == 1:
                    raise leaves[0] from None
                raise
        return result

    @property
    def closed(self) -> bool:
        """True once the connection is closing or closed (no new requests are accepted)."""
        return self._closing

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
                await self._responder.wait_idle()
                await self._outbox.flush()
            self._outbox.finish()
            await self._transport.aclose()
            # Not the task group's scope: it also covers the body of ``async with``.
            self._writer_scope.cancel()
            self._done_event.set()

    def _begin_close(self) -> None:
        """Synchronously: refuse new work, fail waiters, cancel handlers, stop reading."""
        if self._closing:
            return
        self._closing = True
        self._reader_scope.cancel()
        for waiter in self._pending.drain():
            waiter.error = ConnectionClosed(f"connection to {self.name} closed")
            waiter.event.set()
        self._responder.cancel_all()
        assert self._closed_event is not None
        self._closed_event.set()

    # --- outgoing -----------------------------------------------------------------

    async def request(self, method: str, params: Any, result_type: type[R]) -> R:
        """Send a request and return its result decoded as ``result_type``.

        Raises the :class:`~acp2.errors.RequestError` subclass matching an error
        response (``remote=True``), :class:`~acp2.errors.RemoteProtocolError` for a
        malformed result, :class:`~acp2.errors.ConnectionClosed` when the connection
        closes first. If the calling task is cancelled, ``$/cancel_request`` is sent and
        the late response is dropped. ``params=None`` omits ``params``.
        """
        self._check_open()
        if self._reader_task is not None and anyio.get_current_task().id == self._reader_task:
            raise LocalProtocolError("request() inside a notification handler would deadlock")
        waiter = _Waiter()
        rid = self._pending.add(waiter)
        try:
            frame = encode_request(rid, method, params)
        except BaseException:
            self._pending.pop(rid)
            raise
        self._outbox.put(frame)
        try:
            if self._outbox.over_high_water:
                await self._outbox.wait_drained()
            await waiter.event.wait()
        except anyio.get_cancelled_exc_class():
            if self._pending.pop(rid) is not None and not self._closing:
                self._outbox.put(encode_notification(CANCEL_METHOD, {"requestId": rid}))
            raise
        if waiter.error is not None:
            raise waiter.error
        assert waiter.result is not None
        try:
            return decode(waiter.result, result_type)
        except msgspec.ValidationError as exc:
            raise RemoteProtocolError(f"malformed result for {method}: {exc}") from exc

    async def notify(self, method: str, params: Any) -> None:
        """Queue a notification; waits while the outgoing buffer is over the high-water mark.

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

    def send_notification_nowait(self, method: str, params: Any) -> None:
        """Queue a notification without waiting (hot path; no backpressure).

        Raises ``ConnectionClosed`` once the connection is closing.
        """
        self._check_open()
        self._outbox.put(encode_notification(method, params))

    def send_frame_nowait(self, frame: bytes) -> None:
        """Queue one complete, pre-encoded notification frame (no trailing newline).

        For hot paths that build frames by byte concatenation; nothing is validated but
        the absence of raw newlines (``LocalProtocolError``). Raises ``ConnectionClosed``
        once the connection is closing.
        """
        self._check_open()
        if b"\n" in frame:
            raise LocalProtocolError("a frame must not contain a raw newline")
        self._outbox.put(frame)

    @property
    def congested(self) -> bool:
        """True while the outgoing buffer is above the high-water mark."""
        return self._outbox.over_high_water

    async def drain(self) -> None:
        """Return once the outgoing buffer is at or below the high-water mark."""
        await self._outbox.wait_drained()

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
        if self._closing:
            raise ConnectionClosed(f"connection to {self.name} is closed")

    # --- incoming -----------------------------------------------------------------

    async def _write_loop(self) -> None:
        with self._writer_scope:
            await self._outbox.run()

    async def _read_loop(self) -> None:
        self._reader_task = anyio.get_current_task().id
        try:
            with self._reader_scope:
                await self._read_until_eof()
        except Exception:
            logger.exception("%s: reader failed; closing the connection", self.name)
        finally:
            self._begin_close()

    async def _read_until_eof(self) -> None:
        receive = self._transport.receive
        feed = self._framer.feed
        dispatch = self._dispatch
        while True:
            try:
                chunk = await receive()
            except (ConnectionClosed, OSError) as exc:
                logger.debug("%s: receive failed: %r", self.name, exc)
                return
            if not chunk:
                break
            for item in feed(chunk):
                await dispatch(item)
        for item in self._framer.close():
            await dispatch(item)

    # --- hooks used by Inbound ----------------------------------------------------

    def _spawn(self, inbound_task: Any, *args: Any) -> None:
        assert self._tg is not None
        self._tg.start_soon(inbound_task, *args)

    def _put(self, frame: bytes) -> None:
        self._outbox.put(frame)

    def _deliver(self, rid: Any, result: msgspec.Raw | None, error: Exception | None) -> bool:
        waiter = self._pending.pop(rid)
        if waiter is None:
            return False
        waiter.result = result
        waiter.error = error
        waiter.event.set()
        return True


def _leaves(group: BaseExceptionGroup[BaseException]) -> list[BaseException]:
    """The non-group exceptions inside ``group``, depth first."""
    out: list[BaseException] = []
    for item in group.exceptions:
        if isinstance(item, BaseExceptionGroup):
            out.extend(_leaves(item))
        else:
            out.append(item)
    return out

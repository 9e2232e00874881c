"""Turning session updates into wire frames and history rows, fast.

Every ``session/update`` an agent sends goes through :class:`Emitter.emit`: the update
is encoded once, the bytes are queued in the history store (committed right before the
connection writes them) and wrapped into a notification frame by byte concatenation --
no intermediate dicts, no second encode.
"""

from __future__ import annotations

from typing import Any, Protocol

from msgspec import UNSET, Raw

from acp2.agent.store import HistoryStore
from acp2.errors import ConnectionClosed
from acp2.schema import Notice, SessionInfoUpdate, StateUpdate
from acp2.schema.codec import decode_any, encode

__all__ = ["NOT_RECORDED", "Emitter", "FrameSink"]

#: Update kinds that are not part of the conversation history (never replayed).
NOT_RECORDED = frozenset({b"state_update", b"notice"})

_HEAD = b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":'


class FrameSink(Protocol):
    """Where encoded frames go: :class:`acp2.rpc.Connection` implements it."""

    def send_frame_nowait(self, frame: bytes) -> None:
        """Queue one complete JSON-RPC frame (without the newline) for writing."""

    async def drain(self) -> None:
        """Wait until the producer may go on (it lets the other tasks run)."""

    @property
    def congested(self) -> bool:
        """True when the producer should ``await drain()`` now."""


class Emitter:
    """Encodes, records and sends the updates of one session."""

    __slots__ = ("_head", "_sink", "_store", "closed", "session_id")

    def __init__(self, session_id: str, sink: FrameSink, store: HistoryStore | None) -> None:
        self.session_id = session_id
        self._sink = sink
        self._store = store
        self._head = _HEAD + encode(session_id) + b',"update":'
        self.closed = False

    def emit(self, update: Any, *, record: bool = True) -> None:
        """Send one update now (recording it in history unless it is state or a notice).

        After the session is closed nothing more is sent for it (SS-22): the call is a no-op.
        Once the connection is closed the frame is dropped (the work is being cancelled).
        """
        if self.closed:
            return
        body = encode(update)
        if type(update) is Raw and b"\n" in body:
            # An author's raw variant may be pretty-printed JSON: a newline outside strings
            # is whitespace, and it would split the frame (TR-02). Compact it.
            body = encode(decode_any(body))
        if record and self._store is not None and _recorded(update, body):
            self._store.append(self.session_id, body)
            if type(update) is SessionInfoUpdate and update.title is not UNSET:
                self._store.set_title(self.session_id, update.title)  # for session/list
        try:  # noqa: SIM105 - the hot path: a bare try costs less than suppress()
            self._sink.send_frame_nowait(self._head + body + b"}}")
        except ConnectionClosed:
            # The client is gone: the runtime is cancelling the work of this connection,
            # and the handler sees that cancellation at its next await -- not an error.
            pass

    def record_only(self, update: Any) -> None:
        """Put an update in history without sending it (e.g. the inserted user message)."""
        if self._store is not None:
            self._store.append(self.session_id, encode(update))

    async def emit_async(self, update: Any) -> None:
        """:meth:`emit`, then ``drain()`` when the connection says so (backpressure).

        The Connection also reports ``congested`` after a burst of output without a
        yield, so a handler streaming in a tight loop still lets the reader see
        ``session/cancel`` and other sessions' requests, and is cancellable here.
        """
        self.emit(update)
        if self._sink.congested:
            await self._sink.drain()


def _recorded(update: Any, body: bytes) -> bool:
    # A typed update tells its kind by its type (cheaper than reading the bytes); only an
    # unknown (raw) variant needs its tag read from the encoded body.
    kind = type(update)
    if kind is Raw:
        return _kind(body) not in NOT_RECORDED
    return kind is not StateUpdate and kind is not Notice


def _kind(body: bytes) -> bytes:
    # Encoded updates start with their tag: {"sessionUpdate":"<kind>",...
    if body.startswith(b'{"sessionUpdate":"'):
        end = body.find(b'"', 18)
        return body[18:end]
    return b""

"""Turning session updates into wire frames and history rows, fast.

Every ``session/update`` an agent sends goes through :class:`Emitter.emit`: the update
is encoded once, the bytes are queued in the history store (committed right before the
connection writes them) and wrapped into a notification frame by byte concatenation --
no intermediate dicts, no second encode.

A send that finds the connection closed is never swallowed silently: the emitter points
itself at :data:`GONE` (a sink that drops frames but is always congested, so the next
``emit_async`` yields and the producer sees its cancellation there) and cancels the
work of its session (``cancels``). Checking costs nothing on the hot path: the loss is
noticed by the ``ConnectionClosed`` the connection raises, and the backpressure test
every ``emit_async`` makes anyway is what stops the producer.

A sink in this process may take the updates as values too (``send_update_nowait``, an
:data:`UpdateTaker`: the in-process v1 bridge): it then gets each update emitted as the
object, with its frame, and nothing is decoded again; so do the updates of
:meth:`Emitter.record_frame` (kept beside their frames until :meth:`Emitter.send_frame`).
Frames held for a replay or fanned out to several clients reach it as frames.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, Protocol

from anyio.lowlevel import checkpoint
from msgspec import UNSET, Raw

from acp2.errors import ConnectionClosed
from acp2.rpc.messages import encode_notification
from acp2.rpc.update_frames import frame_head
from acp2.schema import Notice, SessionInfoUpdate, StateUpdate
from acp2.schema.codec import decode_any, encode
from acp2.schema.methods import SESSION_UPDATE
from acp2.store.base import NOT_RECORDED, Body, SessionStore

__all__ = ["NOT_RECORDED", "Cancels", "Emitter", "FrameSink", "Gone", "HeldFrames", "UpdateTaker"]


#: Updates at least this big (encoded) are encoded straight into their frame.
BIG_UPDATE = 1024 * 1024
#: Recorded updates kept for a sink that takes objects, until their frames are sent (a
#: few prompts queued at most; past this the oldest is sent as its frame).
MAX_RECORDED = 16


class Cancels(Protocol):
    """What an :class:`Emitter` cancels when its connection is found closed."""

    def cancel(self) -> object:
        """Cancel the work (idempotent)."""


class FrameSink(Protocol):
    """Where encoded frames go: :class:`acp2.rpc.Connection` implements it."""

    def send_frame_nowait(self, frame: bytes) -> None:
        """Queue one complete JSON-RPC frame (without the newline) for writing."""

    async def drain(self) -> None:
        """Wait until the producer may go on (it lets the other tasks run)."""

    @property
    def congested(self) -> bool:
        """True when the producer should ``await drain()`` now."""


#: ``send_update_nowait(session_id, update, frame)`` of a sink in this process: takes an
#: emitted update as the object (``frame`` is its encoding, the same bytes a
#: ``send_frame_nowait`` would get); raises ``ConnectionClosed`` as that would.
UpdateTaker = Callable[[str, Any, bytes], None]


def _taker(sink: FrameSink) -> UpdateTaker | None:
    """The sink's :data:`UpdateTaker`, if it has one (looked up once per retarget)."""
    taker: UpdateTaker | None = getattr(sink, "send_update_nowait", None)
    return taker


class Emitter:
    """Encodes, records and sends the updates of one session."""

    __slots__ = (
        "_head",
        "_recorded",
        "_sink",
        "_store",
        "_taker",
        "cancels",
        "closed",
        "session_id",
    )

    def __init__(self, session_id: str, sink: FrameSink, store: SessionStore | None) -> None:
        self.session_id = session_id
        self._sink = sink
        self._taker = _taker(sink)
        self._store = store
        self._head = frame_head(session_id)
        #: Updates of :meth:`record_frame` not sent yet, by their frame's id (taker only).
        self._recorded: dict[int, tuple[bytes, Any]] | None = None
        self.closed = False
        #: What to cancel once the sink's connection is found closed: the session (an
        #: object, not a bound method: one fewer allocation on every session).
        self.cancels: Cancels | None = None

    def emit(self, update: Any, *, record: bool = True) -> None:
        """Send one update now (recording it in history unless it is state or a notice).

        After the session is closed nothing more is sent for it (SS-22): the call is a no-op.
        Once the connection is closed the frame is dropped and the work is cancelled
        (:meth:`lost`): the producer sees the cancellation at its next ``emit_async``.
        """
        if self.closed:
            return
        body: Body = encode(update)
        if type(update) is Raw and b"\n" in body:
            # An author's raw variant may be pretty-printed JSON: a newline outside strings
            # is whitespace, and it would split the frame (TR-02). Compact it.
            body = encode(decode_any(body))
        frame = None
        if len(body) >= BIG_UPDATE and type(update) is not Raw:
            del body  # encoded again, as the whole frame: never a huge body and its copy
            frame = self._frame(update)
            body = memoryview(frame)[len(self._head) : -2]
        if record and self._store is not None and _recorded(update, body):
            self._store.append(self.session_id, body)
            if type(update) is SessionInfoUpdate and update.title is not UNSET:
                self._store.set_title(self.session_id, update.title)  # for session/list
        try:  # the hot path: a bare try costs nothing until it raises
            if self._taker is None:
                self._sink.send_frame_nowait(self._head + body + b"}}" if frame is None else frame)
            else:
                self._take(update, body, frame)
        except ConnectionClosed:
            self.lost()

    def _take(self, update: Any, body: Body, frame: bytes | None) -> None:
        """:meth:`emit`'s send to a sink that takes the update as the object."""
        assert self._taker is not None
        self._taker(self.session_id, update, self._head + body + b"}}" if frame is None else frame)

    def record_only(self, update: Any) -> None:
        """Put an update in history without sending it."""
        if self._store is not None:
            self._store.append(self.session_id, encode(update))

    def record_frame(self, update: Any) -> bytes:
        """Put an update in history now and return its frame, for :meth:`send_frame` later
        (e.g. the inserted user message: recorded before the prompt's response, sent
        after it). The update is encoded once, straight into the frame, and the history
        keeps a view of the frame's bytes: a huge prompt is not copied for its row."""
        frame = self._frame(update)
        if self._store is not None:
            self._store.append(self.session_id, memoryview(frame)[len(self._head) : -2])
        if self._taker is not None:
            self._keep(frame, update)
        return frame

    def _keep(self, frame: bytes, update: Any) -> None:
        """Keep ``update`` beside its frame for a sink that takes objects (bounded)."""
        recorded = self._recorded
        if recorded is None:
            recorded = self._recorded = {}
        elif len(recorded) >= MAX_RECORDED:
            del recorded[next(iter(recorded))]
        recorded[id(frame)] = (frame, update)

    def _frame(self, update: Any) -> bytes:
        """The whole notification frame of ``update``, encoded in one go (the same bytes
        as the head, the encoded update and the tail joined)."""
        params = {"sessionId": self.session_id, "update": update}
        return encode_notification(SESSION_UPDATE.name, params)

    def send_frame(self, frame: bytes) -> None:
        """Send a frame made by :meth:`record_frame` (a no-op once the session is closed;
        dropped once the connection is)."""
        if self.closed:
            return
        kept = None if self._recorded is None else self._recorded.pop(id(frame), None)
        try:
            if kept is not None and kept[0] is frame and self._taker is not None:
                self._taker(self.session_id, kept[1], frame)  # the object: no decode
            else:
                self._sink.send_frame_nowait(frame)
        except ConnectionClosed:
            self.lost()

    def lost(self) -> None:
        """The sink's connection is closed: drop every later frame, make the next
        ``emit_async`` yield (so a cancelled producer stops there) and cancel
        ``cancels`` (the session's work). Idempotent until :meth:`retarget`."""
        if self._sink is GONE:
            return
        self._point(GONE)
        if self.cancels is not None:
            self.cancels.cancel()

    def retarget(self, sink: FrameSink) -> None:
        """Send to ``sink`` from now on (the clients attached to the session changed,
        :mod:`acp2.agent.session_hub`); frames kept by :meth:`hold` go there at the release."""
        held = self._sink
        if isinstance(held, HeldFrames):
            held.sink = sink
        else:
            self._point(sink)

    def _point(self, sink: FrameSink) -> None:
        """Send to ``sink`` (as values, if it takes them) from now on."""
        self._sink = sink
        self._taker = _taker(sink)

    def hold(self) -> None:
        """Keep every frame sent from now on until :meth:`release` (a resume's replay is
        running: live updates wait behind it, RFD session-replay-complete). They are still
        recorded in history as they are emitted."""
        held = self._sink
        if isinstance(held, HeldFrames):
            held.depth += 1  # two replays at once: held until both are done
        else:
            self._point(HeldFrames(held))

    def release(self) -> None:
        """Undo one :meth:`hold`; after the last, send the kept frames in order."""
        held = self._sink
        if isinstance(held, HeldFrames):
            held.depth -= 1
            if held.depth:
                return
            self._point(held.sink)
            held.flush()

    async def emit_async(self, update: Any) -> None:
        """:meth:`emit`, then ``drain()`` when the connection says so (backpressure).

        The Connection also reports ``congested`` after a burst of output without a
        yield, so a handler streaming in a tight loop still lets the reader see
        ``session/cancel`` and other sessions' requests, and is cancellable here.
        """
        self.emit(update)
        if self._sink.congested:
            await self._sink.drain()


class Gone:
    """The :class:`FrameSink` of an emitter no client receives any more: frames are
    dropped (the emitter still records them), and it is always congested, so every
    ``emit_async`` yields once in :meth:`drain` -- where a producer whose work was
    cancelled sees ``CancelledError`` instead of running on at full speed."""

    __slots__ = ()

    def send_frame_nowait(self, frame: bytes) -> None:
        """Drop ``frame``."""

    @property
    def congested(self) -> bool:
        """Always: the producer must reach a checkpoint."""
        return True

    async def drain(self) -> None:
        """Let the other tasks run once (a checkpoint: cancellation is delivered here)."""
        await checkpoint()


#: The one :class:`Gone` sink (it holds nothing).
GONE: Final = Gone()


class HeldFrames:
    """A :class:`FrameSink` that keeps the frames (backpressure is the real sink's) until
    :meth:`flush` sends them to the real one."""

    __slots__ = ("depth", "frames", "sink")

    def __init__(self, sink: FrameSink) -> None:
        self.sink = sink
        self.frames: list[bytes] = []
        self.depth = 1

    def send_frame_nowait(self, frame: bytes) -> None:
        """Keep ``frame`` for the release."""
        self.frames.append(frame)

    def flush(self) -> None:
        """Send the kept frames to the real sink, in order (dropped if it is closed)."""
        frames, self.frames = self.frames, []
        for frame in frames:
            try:  # noqa: SIM105 - same as emit
                self.sink.send_frame_nowait(frame)
            except ConnectionClosed:
                pass

    async def drain(self) -> None:
        """The real sink's drain."""
        await self.sink.drain()

    @property
    def congested(self) -> bool:
        """The real sink's state."""
        return self.sink.congested

    @property
    def lagging(self) -> bool:
        """The real sink's ``lagging`` (False when it cannot tell; see acp2.agent.fanout)."""
        return bool(getattr(self.sink, "lagging", False))


def _recorded(update: Any, body: Body) -> bool:
    # A typed update tells its kind by its type (cheaper than reading the bytes); only an
    # unknown (raw) variant needs its tag read from the encoded body.
    kind = type(update)
    if kind is Raw:
        return _kind(bytes(body)) not in NOT_RECORDED  # a raw body is bytes: no copy
    return kind is not StateUpdate and kind is not Notice


def _kind(body: bytes) -> bytes:
    # Encoded updates start with their tag: {"sessionUpdate":"<kind>",...
    if body.startswith(b'{"sessionUpdate":"'):
        end = body.find(b'"', 18)
        return body[18:end]
    return b""

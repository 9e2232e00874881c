"""The outgoing side of a connection: one buffer, coalesced writes, written in order.

Frames are appended synchronously (:meth:`Outbox.put`), so whoever appends first is
written first. Two ways out:

* **Direct** (transports with ``send_nowait``, e.g. stdio): a frame put while the outbox
  is idle and nothing else is ready to run goes out at once, in the same synchronous
  step -- no writer-task wake-up on the latency path. Frames put after it are coalesced
  and written together once per event-loop iteration (or as soon as :data:`FLUSH_SIZE`
  bytes are waiting, so a producer that never yields still streams); the outbox is idle
  again after an iteration in which nothing was put. A caller that knows more output is
  coming in this pass (it just started a task that writes at once) asks for it with
  :meth:`Outbox.coalesce`: e.g. a prompt's response and the first updates of the turn it
  started then share one write and one wake-up of the peer. Whatever the transport
  cannot take without blocking is handed to the writer task, and every later frame
  queues behind it.
* **Writer task** (any other transport): the task takes *everything* queued, joins it
  into one chunk and makes one ``transport.send``; under load many frames share one write.

The buffer size is tracked so notification senders can wait above a high-water mark
(:meth:`wait_drained`), while responses are never held back. :attr:`Outbox.backlog` also
counts what a write in progress has not handed over yet (writes go out in pieces of at
most :data:`WRITE_PIECE` bytes, each one a sign of progress), so the connection can stop
reading from a peer that leaves too much of our output unread.

Who owns the stream is an explicit :data:`State` (transitions in :data:`TRANSITIONS`),
and the writer task's life another (:data:`WriterState`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final, Literal

import anyio

from acp2 import _aio
from acp2.errors import ConnectionClosed
from acp2.rpc.events import Tap

if TYPE_CHECKING:  # an annotation only: the shell needs no transport module at run time
    from acp2.transport.base import Transport

__all__ = [
    "DEFAULT_HIGH_WATER",
    "FLUSH_SIZE",
    "TRANSITIONS",
    "WRITE_PIECE",
    "Outbox",
    "State",
    "Tap",
    "WriterState",
]

logger = logging.getLogger("acp2.rpc")

#: Notification senders wait while more than this many bytes are queued.
DEFAULT_HIGH_WATER: Final = 4 * 1024 * 1024

#: Direct mode: queued bytes that are written at once, without waiting for the end of the
#: loop iteration, so a producer that never yields still streams. Measured on the stream
#: benchmark: 64 KiB ~192k updates/s, 256 KiB ~215k, 512 KiB ~221k (medians of 4; fewer
#: writes mean fewer wake-ups of the reader, see docs/benchmarks.md). 256 KiB is a
#: quarter of the 1 MiB pipes spawn_agent asks for, and ~3 ms of a tight producer.
FLUSH_SIZE: Final = 256 * 1024

#: The largest piece handed to ``transport.send`` at once: a peer that reads slowly still
#: shows progress (and frees memory) every this many bytes.
WRITE_PIECE: Final = 1024 * 1024

#: Who owns the outgoing stream:
#:
#: * ``"idle"``: nothing is being written; in direct mode the next frame goes out at once;
#: * ``"coalescing"``: direct mode, within a pass of the event loop that wrote (or was
#:   asked to coalesce): frames queue until the pass ends, then go out together;
#: * ``"writing"``: the writer task owns the stream (a write is in flight, or the rest of
#:   a direct write the transport could not take); frames queue behind it;
#: * ``"broken"``: a write failed, or the output was abandoned; frames are dropped.
State = Literal["idle", "coalescing", "writing", "broken"]

#: The allowed transitions of :data:`State` (staying in a state is always allowed).
TRANSITIONS: Final[dict[State, frozenset[State]]] = {
    "idle": frozenset({"coalescing", "writing", "broken"}),
    "coalescing": frozenset({"idle", "writing", "broken"}),
    "writing": frozenset({"idle", "coalescing", "broken"}),
    "broken": frozenset(),
}

#: The writer task's life: ``"running"``, ``"finishing"`` (exit once nothing is queued,
#: after :meth:`Outbox.finish`), ``"stopped"`` (it ended: finished, failed or cancelled).
WriterState = Literal["running", "finishing", "stopped"]


class Outbox:
    """Queue frames and write them in order; see the module docstring."""

    __slots__ = (
        "_bigs",
        "_direct",
        "_frames",
        "_high_water",
        "_hooks",
        "_inflight",
        "_max_unread",
        "_on_broken",
        "_pass_scheduled",
        "_progress",
        "_size",
        "_state",
        "_tail",
        "_tap",
        "_transport",
        "_unyielded",
        "_wake",
        "_writer",
    )

    def __init__(
        self,
        transport: Transport,
        *,
        on_broken: Callable[[], None],
        tap: Tap | None = None,
        high_water: int = DEFAULT_HIGH_WATER,
        max_unread: int | None = None,
    ) -> None:
        self._transport = transport
        #: See :attr:`unread_exceeded` (None: never).
        self._max_unread = max_unread if max_unread is not None else float("inf")
        self._direct: Callable[[bytes], int] | None = getattr(transport, "send_nowait", None)
        self._on_broken = on_broken
        self._tap = tap
        self._high_water = high_water
        self._frames: list[bytes] = []
        #: How many queued frames are bigger than WRITE_PIECE (each is taken alone).
        self._bigs = 0
        self._hooks: list[Callable[[], None]] = []
        self._size = 0
        #: Bytes put since :meth:`yielded` was last called (see ``Connection.congested``).
        self._unyielded = 0
        self._state: State = "idle"
        self._writer: WriterState = "running"
        #: Direct mode: the callback that ends the coalescing pass is scheduled (it can
        #: still be while the writer task writes; then the pass ends when it finishes).
        self._pass_scheduled = False
        #: Direct mode: bytes the transport did not take, for the writer task.
        self._tail: memoryview | None = None
        #: Bytes taken from the queue (or the tail) that the transport has not taken yet.
        self._inflight = 0
        self._wake: _aio.Waiter[Any] | None = None
        self._progress: _aio.Event | None = None

    @property
    def state(self) -> State:
        """Who owns the stream now (see :data:`State`)."""
        return self._state

    @property
    def writer_state(self) -> WriterState:
        """The writer task's life (see :data:`WriterState`)."""
        return self._writer

    def _to(self, state: State) -> None:
        """Move to ``state``; a transition :data:`TRANSITIONS` does not allow is a bug."""
        current = self._state
        if state is not current:
            assert state in TRANSITIONS[current], f"outbox: {current} -> {state}"
            self._state = state

    @property
    def broken(self) -> bool:
        """True once a write failed; later frames are dropped."""
        return self._state == "broken"

    @property
    def over_high_water(self) -> bool:
        """True while more than the high-water mark is queued."""
        return self._size > self._high_water

    @property
    def backlog(self) -> int:
        """Bytes of output not handed to the transport yet: queued, or in a write."""
        return self._size + self._inflight

    @property
    def unread_exceeded(self) -> bool:
        """True while :attr:`backlog` is above ``max_unread``: stop reading from the peer."""
        return self._size + self._inflight > self._max_unread

    @property
    def unyielded(self) -> int:
        """Bytes put since the last :meth:`yielded` call."""
        return self._unyielded

    def yielded(self) -> None:
        """Note that the producer let other tasks run (resets :attr:`unyielded`)."""
        self._unyielded = 0

    def write_queued(self) -> None:
        """Direct mode: write what is queued now (a producer about to yield calls this)."""
        if self._direct is not None and self._frames and self._state == "coalescing":
            self._write_now()

    def coalesce(self) -> None:
        """Direct mode: hold frames put from now to the end of this pass of the event loop
        and write them together -- after the callbacks and task steps ready now, such as
        the first step of a task just started (a producer resuming after a yield calls
        this too, so that its next frame does not go out alone)."""
        if self._direct is None or self._state == "broken":
            return
        if self._state == "idle":
            self._to("coalescing")
        self._schedule_pass_end()

    def add_flush_hook(self, hook: Callable[[], None]) -> None:
        """Call ``hook()`` right before every write (e.g. to commit what is being sent)."""
        self._hooks.append(hook)

    def put(self, frame: bytes) -> None:
        """Append one frame (without newline); it is written after every earlier frame."""
        state = self._state
        if state == "broken":
            return
        if self._tap is not None:
            self._tap("out", frame)
        frames = self._frames
        frames.append(frame)
        size = len(frame) + 1
        self._size += size
        self._unyielded += size
        if size > WRITE_PIECE + 1:  # the frame alone is bigger
            self._bigs += 1
        if state == "writing":
            return  # the writer task picks it up after its current write
        if self._direct is None:
            if len(frames) == 1:  # the writer only sleeps on an empty queue
                self._wake_writer()
        elif state == "idle":
            self._state = "coalescing"
            self._schedule_pass_end()
            self._write_now()
        elif self._size >= FLUSH_SIZE:
            self._write_now()

    async def wait_drained(self) -> None:
        """Return once the queue is at or below the high-water mark (or writes failed)."""
        while self._size > self._high_water and self._state != "broken":
            await self._wait_progress()

    def abandon(self, reason: str) -> None:
        """Drop everything queued and write nothing more (the peer is not reading)."""
        if self._state != "broken":
            self._fail(ConnectionClosed(reason))

    async def wait_unread_halved(self, stall_timeout: float) -> bool:
        """Return True once :attr:`backlog` is down to half of ``max_unread`` (or writes
        failed); False as soon as ``stall_timeout`` seconds pass without write progress."""
        size = self._max_unread / 2
        while self.backlog > size and self._state != "broken" and self._writer != "stopped":
            with anyio.move_on_after(stall_timeout) as scope:
                await self._wait_progress()
            if scope.cancelled_caught:
                return False
        return True

    async def flush(self) -> None:
        """Return once everything queued so far was written (or writes failed, or the
        writer task is gone)."""
        while (
            (self._frames or self._state == "writing")
            and self._state != "broken"
            and self._writer != "stopped"
        ):
            await self._wait_progress()

    def finish(self) -> None:
        """Ask the writer task to exit once the queue is empty."""
        if self._writer == "running":
            self._writer = "finishing"
        self._wake_writer()

    async def run(self) -> None:
        """The writer task: write what direct writes could not, or everything without them,
        until :meth:`finish` or a failed write."""
        try:
            await self._run()
        finally:
            self._writer = "stopped"
            self._signal_progress()

    async def _run(self) -> None:
        data: bytes | memoryview
        while self._state != "broken":
            if self._tail is not None:
                data, self._tail = self._tail, None
            elif self._frames:
                data = self._take()
                self._inflight = len(data)
            else:
                if self._state == "writing":
                    self._to("coalescing" if self._pass_scheduled else "idle")
                self._signal_progress()
                if self._writer == "finishing":
                    return
                self._wake = _aio.new_waiter()
                try:
                    await self._wake
                finally:
                    self._wake = None
                continue
            self._to("writing")
            await self._write(data)

    # -- internals ---------------------------------------------------------------------

    def _schedule_pass_end(self) -> None:
        if not self._pass_scheduled:
            self._pass_scheduled = True
            _aio.call_soon(self._end_pass)

    def _take(self) -> bytes:
        """Take every queued frame as one chunk, after running the flush hooks.

        A frame bigger than :data:`WRITE_PIECE` is never copied into a chunk: the frames
        queued before it are taken without it, then it is taken as it is, and an empty
        frame stays queued in its place, whose separator is its newline (it goes out with
        the next chunk)."""
        frames = self._frames
        if self._bigs:
            big = _first_big(frames)
            if big == 0:
                frame = frames[0]
                frames[0] = b""
                self._bigs -= 1
                self._size -= len(frame)
                self._signal_progress()
                self._run_hooks()
                return frame
            if big > 0:
                self._frames = frames[big:]
                frames = frames[:big]
                self._size -= sum(map(len, frames)) + len(frames)
                return self._chunk(frames)
        self._frames = []
        self._size = 0
        self._bigs = 0
        return self._chunk(frames)

    def _chunk(self, frames: list[bytes]) -> bytes:
        """The taken ``frames`` (now off the queue) as one chunk, each with its newline."""
        self._signal_progress()
        frames.append(b"")
        self._run_hooks()
        return b"\n".join(frames)

    def _end_pass(self) -> None:
        self._pass_scheduled = False
        if self._state != "coalescing":
            return  # writing: the writer task goes on; broken: nothing to do
        if self._frames:
            self._write_now()
            # Frames keep coming (a producer yielding between frames): keep coalescing
            # until a pass goes by without any, then the next frame goes out at once.
            self._schedule_pass_end()
        else:
            self._to("idle")

    def _write_now(self) -> None:
        """Direct mode: hand everything queued to the transport; the rest to the writer."""
        assert self._direct is not None
        while self._frames:  # more than once only around a big frame (then its newline)
            data = self._take()
            try:
                sent = self._direct(data)
            except Exception as exc:  # any failed write means the stream is gone
                self._fail(exc)
                return
            if sent < len(data):
                self._tail = memoryview(data)[sent:]  # a view: no copy of a big rest
                self._inflight = len(data) - sent
                self._to("writing")
                self._wake_writer()
                return

    def _wake_writer(self) -> None:
        wake = self._wake
        if wake is not None:
            _aio.resolve(wake, None)

    async def _wait_progress(self) -> None:
        progress = self._progress
        if progress is None:
            progress = self._progress = _aio.Event()
        await progress.wait()

    def _signal_progress(self) -> None:
        progress = self._progress
        if progress is not None:
            self._progress = None
            progress.set()

    def _run_hooks(self) -> None:
        for hook in self._hooks:
            try:
                hook()
            except Exception:
                logger.exception("flush hook %r failed; writing anyway", hook)

    async def _write(self, data: bytes | memoryview) -> None:
        try:
            if len(data) <= WRITE_PIECE:
                await self._transport.send(data if type(data) is bytes else bytes(data))
            else:
                await self._write_pieces(data)
        except Exception as exc:  # any failed write means the stream is gone
            self._fail(exc)
        finally:
            self._inflight = 0

    async def _write_pieces(self, data: bytes | memoryview) -> None:
        """Send a big chunk piece by piece, counting and signalling each one's progress."""
        view = memoryview(data)
        for start in range(0, len(view), WRITE_PIECE):
            piece = bytes(view[start : start + WRITE_PIECE])
            await self._transport.send(piece)
            self._inflight -= len(piece)
            self._signal_progress()

    def _fail(self, exc: Exception) -> None:
        logger.debug("write failed, dropping outgoing frames: %r", exc)
        self._to("broken")
        self._frames = []
        self._bigs = 0
        self._tail = None
        self._size = 0
        self._inflight = 0
        self._signal_progress()
        self._wake_writer()
        self._on_broken()


def _first_big(frames: list[bytes]) -> int:
    """The index of the first frame bigger than :data:`WRITE_PIECE` (-1: none)."""
    for index, frame in enumerate(frames):
        if len(frame) > WRITE_PIECE:
            return index
    return -1

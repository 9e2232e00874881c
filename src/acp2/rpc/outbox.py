"""The outgoing side of a connection: one buffer, one writer task, coalesced writes.

Frames are appended synchronously (:meth:`Outbox.put`), so whoever appends first is
written first. The writer task takes *everything* queued, joins it into one chunk and
makes one ``transport.send``; under load many frames share one write. The buffer size is
tracked so notification senders can wait above a high-water mark (:meth:`wait_drained`),
while responses are never held back.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Final, Literal

import anyio

from acp2.transport.base import Transport

__all__ = ["DEFAULT_HIGH_WATER", "Outbox", "Tap"]

logger = logging.getLogger("acp2.rpc")

#: Notification senders wait while more than this many bytes are queued.
DEFAULT_HIGH_WATER: Final = 4 * 1024 * 1024

#: ``tap(direction, frame)``: sees every frame (without its newline) as it is sent or read.
Tap = Callable[[Literal["in", "out"], bytes], None]


class Outbox:
    """Queue frames and write them in order; see the module docstring."""

    __slots__ = (
        "_broken",
        "_drained",
        "_finishing",
        "_frames",
        "_high_water",
        "_hooks",
        "_idle",
        "_on_broken",
        "_size",
        "_tap",
        "_transport",
        "_wake",
        "_writing",
    )

    def __init__(
        self,
        transport: Transport,
        *,
        on_broken: Callable[[], None],
        tap: Tap | None = None,
        high_water: int = DEFAULT_HIGH_WATER,
    ) -> None:
        self._transport = transport
        self._on_broken = on_broken
        self._tap = tap
        self._high_water = high_water
        self._frames: list[bytes] = []
        self._hooks: list[Callable[[], None]] = []
        self._size = 0
        self._writing = False
        self._broken = False
        self._finishing = False
        self._wake = anyio.Event()
        self._drained = anyio.Event()
        self._idle = anyio.Event()

    @property
    def broken(self) -> bool:
        """True once a write failed; later frames are dropped."""
        return self._broken

    @property
    def over_high_water(self) -> bool:
        """True while more than the high-water mark is queued."""
        return self._size > self._high_water

    def add_flush_hook(self, hook: Callable[[], None]) -> None:
        """Call ``hook()`` right before every write (e.g. to commit what is being sent)."""
        self._hooks.append(hook)

    def put(self, frame: bytes) -> None:
        """Append one frame (without newline); it is written after every earlier frame."""
        if self._broken:
            return
        if self._tap is not None:
            self._tap("out", frame)
        frames = self._frames
        frames.append(frame)
        self._size += len(frame) + 1
        if len(frames) == 1:  # the writer only sleeps on an empty queue
            self._wake.set()

    async def wait_drained(self) -> None:
        """Return once the queue is at or below the high-water mark (or writes failed)."""
        while self._size > self._high_water and not self._broken:
            if self._drained.is_set():
                self._drained = anyio.Event()
            await self._drained.wait()

    async def flush(self) -> None:
        """Return once everything queued so far was written (or writes failed)."""
        while (self._frames or self._writing) and not self._broken:
            if self._idle.is_set():
                self._idle = anyio.Event()
            await self._idle.wait()

    def finish(self) -> None:
        """Ask the writer task to exit once the queue is empty."""
        self._finishing = True
        self._wake.set()

    async def run(self) -> None:
        """The writer task: write queued frames until :meth:`finish` or a failed write."""
        while not self._broken:
            if not self._frames:
                self._idle.set()
                if self._finishing:
                    return
                await self._wake.wait()
                self._wake = anyio.Event()
                continue
            frames = self._frames
            self._frames = []
            self._size = 0
            self._drained.set()
            frames.append(b"")
            self._run_hooks()
            await self._write(b"\n".join(frames))

    def _run_hooks(self) -> None:
        for hook in self._hooks:
            try:
                hook()
            except Exception:
                logger.exception("flush hook %r failed; writing anyway", hook)

    async def _write(self, data: bytes) -> None:
        self._writing = True
        try:
            await self._transport.send(data)
        except Exception as exc:  # any failed write means the stream is gone
            logger.debug("write failed, dropping outgoing frames: %r", exc)
            self._broken = True
            self._frames = []
            self._size = 0
            self._drained.set()
            self._idle.set()
            self._on_broken()
        finally:
            self._writing = False

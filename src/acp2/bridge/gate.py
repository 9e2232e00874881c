"""One transport written by two tasks, whole lines at a time (``acp2 bridge``'s copy).

A pass-through direction copies the lines of one side to the other; the bridge also
answers a side itself when it drops that side's oversized request. Both write to the
same transport, and a direct copy may leave a line half written (``send_nowait`` took
part of it; the rest follows with ``send``), so every writer holds the :class:`Gate`
of the transport while a line of its own is incomplete there. :meth:`Gate.try_take` is
what the copier's read callback uses: a flag test, no await, nothing allocated.
"""

from __future__ import annotations

import asyncio
from collections import deque

from acp2.errors import ConnectionClosed
from acp2.transport.base import Transport

__all__ = ["Gate"]


class Gate:
    """Who may write to one transport now. Not reentrant; one event loop."""

    def __init__(self) -> None:
        self.held = False
        self._waiters: deque[asyncio.Future[None]] = deque()

    def try_take(self) -> bool:
        """Take the gate if it is free (True), else leave it (False); never waits."""
        if self.held:
            return False
        self.held = True
        return True

    async def take(self) -> None:
        """Wait until the gate is free, then take it."""
        while self.held:
            waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                await waiter
            except asyncio.CancelledError:
                if waiter.done() and not waiter.cancelled():
                    self._wake()  # woken and cancelled at once: pass the turn on
                raise
        self.held = True

    def give(self) -> None:
        """Free the gate and wake the next waiter, if any."""
        self.held = False
        self._wake()

    def _wake(self) -> None:
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return

    async def send(self, sink: Transport, line: bytes) -> None:
        """Write ``line`` (whole lines) to ``sink`` between the other writers' lines;
        a closed ``sink`` is ignored (the side is gone, and no one is left to answer)."""
        await self.take()
        try:
            await sink.send(line)
        except ConnectionClosed:
            pass
        finally:
            self.give()

"""One outgoing stream of a remote connection: a WebSocket, or one SSE stream.

An :class:`Outlet` queues the messages the agent side sends until the stream's current
reader (the task writing to the socket) takes them. On a durable stream every message
also goes into a :class:`~acp2.transport.durable.Retained` window under its seq, so a
reader that reattaches after a drop gets :meth:`Outlet.resume` (everything after the
seq it names) instead of what happened to be queued.

The bytes an outlet holds for its client are counted (``account``, shared by the
connection's outlets) so the connection can make the agent wait (backpressure): on a
durable stream a message counts until the client acknowledges it (WebSocket ack frames;
over SSE an ``Acp2-Ack`` POST or a reopen's ``Last-Event-ID``), so what a client has not
confirmed is never dropped for room; on a plain stream until its reader takes it for the
socket. Without acknowledgements (``peer_acks=False``) a durable window is instead cut to
``max_bytes`` (the oldest messages go; a resume that needs them is refused as too old).
"""

from __future__ import annotations

import asyncio
import math
import sys
from collections import deque
from collections.abc import Callable
from itertools import repeat

import anyio

from acp2.transport.durable import Retained, Retention

__all__ = ["Outlet"]


class Outlet:
    """Messages waiting for one stream's reader; see the module docstring.

    ``retention`` makes it durable; ``peer_acks`` says the client acknowledges (a durable
    WebSocket), so held bytes are released by :meth:`ack` rather than by :meth:`take`.
    """

    def __init__(
        self,
        account: Callable[[int], None],
        *,
        retention: Retention | None = None,
        peer_acks: bool = False,
        max_bytes: int = 16 * 1024 * 1024,
    ) -> None:
        self._account = account
        self._peer_acks = peer_acks and retention is not None
        if retention is not None and self._peer_acks:
            # The client acknowledges, so what is unacknowledged is bounded by the
            # connection's byte bound (the agent waits); a count bound would drop messages
            # the client has not taken yet while it is away, and no resume could work.
            retention = Retention(messages=sys.maxsize, seconds=retention.seconds)
        self.retained = Retained(retention) if retention is not None else None
        self._max_bytes = max_bytes
        self._queue: deque[tuple[int, bytes]] = deque()
        #: The retained window's bytes as last counted (follows its acks and trims).
        self._retained_bytes = 0
        self._wake = asyncio.Event()
        #: Bumped by every :meth:`attach`; a reader whose number is stale stops.
        self.generation = 0
        #: True while a reader is attached.
        self.reading = False

    @property
    def durable(self) -> bool:
        """True when the stream numbers and keeps its messages."""
        return self.retained is not None

    def push(self, message: bytes) -> None:
        """Queue ``message`` (one JSON-RPC message, no newline) for the reader."""
        self.push_all([message])

    def push_all(self, messages: list[bytes]) -> int:
        """Queue ``messages`` in order, as :meth:`push` each would, with one window append,
        one byte count and one wake-up for all of them; return the seq of the last (0 on
        a plain stream)."""
        size = sum(map(len, messages))
        retained = self.retained
        if retained is None:
            self._queue.extend(zip(repeat(0), messages))
            self._account(size)
            self._wake.set()
            return 0
        first = retained.extend(messages)
        self._queue.extend(zip(range(first, first + len(messages)), messages, strict=True))
        self._retained_bytes += size
        if self._peer_acks:
            self._account(size)
        self._sync()
        if not self._peer_acks:
            self._account(size)
        self._wake.set()
        return retained.last

    def take(self) -> list[tuple[int, bytes]]:
        """Everything queued, oldest first (seq 0 on a plain stream); the queue empties.

        Unless the client acknowledges, the taken bytes stop counting now: the reader's
        write waits for the socket to drain, so what piles up meanwhile is queued here."""
        items = list(self._queue)
        self._queue.clear()
        if not self._peer_acks and items:
            self._account(-sum(len(m) for _, m in items))
        return items

    def ack(self, upto: int) -> None:
        """The client acknowledged every seq up to ``upto``: forget them."""
        if self.retained is not None:
            self.retained.ack(upto)
            self._sync()

    def resume(self, after: int) -> None:
        """Requeue every kept message after seq ``after`` (the client's last).

        Raises :class:`~acp2.transport.durable.CursorTooOld` when they are not all kept,
        and ``ValueError`` for a seq never sent or a plain stream.
        """
        if self.retained is None:
            raise ValueError("not a durable stream")
        items = self.retained.after(after)
        self._sync()
        if not self._peer_acks:
            self._account(sum(len(m) for _, m in items) - sum(len(m) for _, m in self._queue))
        self._queue = deque(items)
        self._wake.set()

    def start_at(self, seq: int) -> None:
        """Number the next message ``seq + 1``, as if ``seq`` messages were sent and
        acknowledged (a stream another node served up to ``seq``, taken over here)."""
        if self.retained is None:
            raise ValueError("not a durable stream")
        self.retained.last = self.retained.acked = seq

    def attach(self) -> int:
        """Make a new reader current; return its generation (an older reader stops)."""
        self.generation += 1
        self.reading = True
        self._wake.set()
        return self.generation

    def detach(self, generation: int) -> None:
        """The reader of ``generation`` is gone (no-op when a newer one took over)."""
        if generation == self.generation:
            self.reading = False

    def wake(self) -> None:
        """Wake the reader (the connection ended, or it has something else to do)."""
        self._wake.set()

    async def wait(self, within: float | None) -> bool:
        """Wait until woken or ``within`` seconds pass; True when woken."""
        if not self._wake.is_set():
            # anyio's scope, not asyncio.wait_for: under anyio task groups wait_for's
            # timeout was seen not to fire (tests/serve/test_serve_backpressure.py).
            with anyio.move_on_after(within if within is not None else math.inf):
                await self._wake.wait()
            if not self._wake.is_set():
                return False
        self._wake.clear()
        return True

    def release(self) -> None:
        """The connection ended: give back every byte still counted."""
        held = self._retained_bytes if self._peer_acks else sum(len(m) for _, m in self._queue)
        self._account(-held)
        self._queue.clear()
        self._retained_bytes = 0
        self._peer_acks = False
        self.retained = None

    def _sync(self) -> None:
        """Follow the window's trims and acks in the byte count; cut it to ``max_bytes``."""
        retained = self.retained
        assert retained is not None
        if not self._peer_acks:
            retained.shed(self._max_bytes)
        freed = self._retained_bytes - retained.held_bytes
        if freed:
            self._retained_bytes -= freed
            if self._peer_acks:
                self._account(-freed)

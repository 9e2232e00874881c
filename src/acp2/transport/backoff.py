"""Reconnect pacing: jittered exponential backoff, bounded by attempts and by time.

A remote link that drops is reconnected underneath the byte stream; :class:`Backoff`
says how long to wait before each attempt and when to give up. The delays grow
exponentially up to a cap, and each is drawn at random between half of it and all of it
("equal jitter"), so many clients dropped at once by one server restart do not all come
back in the same instant, while none retries sooner than half the planned delay.
The clock and the random source are injectable, for tests.
"""

from __future__ import annotations

import random as _random
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

__all__ = ["Backoff"]


@dataclass(frozen=True)
class Backoff:
    """How a dropped link is retried.

    Attempt ``n`` (0-based) waits ``d * (0.5 + 0.5 * random())`` seconds first, where
    ``d = min(max_delay, initial * factor ** n)``; the first attempt waits too (a server
    that just dropped us is seldom back at once). :meth:`delays` stops after
    ``max_attempts`` attempts, or once ``max_elapsed`` seconds have passed since it was
    started, whichever comes first (``None`` lifts that bound).
    """

    initial: float = 0.05
    factor: float = 2.0
    max_delay: float = 5.0
    max_attempts: int | None = 20
    max_elapsed: float | None = 120.0
    clock: Callable[[], float] = field(default=time.monotonic, compare=False)
    random: Callable[[], float] = field(default=_random.random, compare=False)
    #: Told ``(attempt, wait)`` (0-based attempt) before each wait: how a UI says
    #: "reconnecting" while it happens. It must return at once and never raise.
    on_wait: Callable[[int, float], None] | None = field(default=None, compare=False)

    def delay(self, attempt: int) -> float:
        """The jittered wait before attempt ``attempt`` (0-based)."""
        planned = min(self.max_delay, self.initial * self.factor ** min(attempt, 64))
        return planned * (0.5 + 0.5 * self.random())

    def delays(self) -> Iterator[float]:
        """The wait before each attempt, until the attempts or the time run out.

        A delay that would end past ``max_elapsed`` is shortened to end there, and that
        attempt is the last one.
        """
        start = self.clock()
        attempt = 0
        while self.max_attempts is None or attempt < self.max_attempts:
            wait = self.delay(attempt)
            if self.max_elapsed is not None:
                left = self.max_elapsed - (self.clock() - start)
                if left <= 0:
                    return
                if wait >= left:
                    self._tell(attempt, left)
                    yield left
                    return
            self._tell(attempt, wait)
            yield wait
            attempt += 1

    def _tell(self, attempt: int, wait: float) -> None:
        if self.on_wait is not None:
            self.on_wait(attempt, wait)

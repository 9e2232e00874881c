"""What a remote chat's link is doing, for its status line: ``reconnecting · attempt 3 in
2.0s`` while a dropped link is being re-established, nothing otherwise.

:class:`ReconnectStatus` is the ``on_wait`` of the client's reconnect
:class:`~acp2.transport.backoff.Backoff`, told before each wait; it reads the transport's
counters (``reconnects``, ``rejoins``, its current link) to notice that an attempt
succeeded. When the attempts run out the connection closes and the chat's error says why
(:meth:`acp2.client.core.ClientCore.describe_closed`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

__all__ = ["ReconnectStatus"]


class ReconnectStatus:
    """``text()`` is the status part while reconnecting (None otherwise); ``transport``
    returns the client's remote transport (``client.remote``) once connected."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.transport: Callable[[], Any] = lambda: None
        self._clock = clock
        self._attempt: int | None = None
        self._next_at = 0.0
        self._marker: tuple[Any, ...] = ()

    def waiting(self, attempt: int, wait: float) -> None:
        """``Backoff.on_wait``: attempt ``attempt`` (0-based) comes after ``wait`` s."""
        self._attempt = attempt + 1
        self._next_at = self._clock() + wait
        self._marker = self._progress()

    def text(self) -> str | None:
        """``reconnecting · attempt N in Ts`` / ``reconnecting · attempt N…``, or None."""
        if self._attempt is None:
            return None
        left = self._next_at - self._clock()
        if left <= 0 and self._progress() != self._marker and self._linked():
            self._attempt = None  # an attempt after the last wait got through
            return None
        if left > 0:
            return f"reconnecting · attempt {self._attempt} in {left:.1f}s"
        return f"reconnecting · attempt {self._attempt}…"

    def _progress(self) -> tuple[Any, ...]:
        link = self.transport()
        current = getattr(link, "current", link)
        return (getattr(link, "rejoins", 0), id(current), getattr(current, "reconnects", 0))

    def _linked(self) -> bool:
        link = self.transport()
        return getattr(link, "current", link) is not None

"""When a SQLite flush rewrites a session's ``updated_at``: at most once a second.

Every flush used to set ``updated_at`` of each session it wrote: one more row and one
more index entry (``sessions_by_update``) changed per commit -- about a quarter of the
commit of a one-update prompt (issue 25). ``updated_at`` only orders ``session/list``, so
a session that streams gets it written the first time, and then at most once per
:data:`STAMP_INTERVAL`; touches in between are remembered (their wall time) and written
by a later flush (at most two intervals later), by :meth:`Stamps.take_all` before a
list reads the table, and when the session's lease ends. So the stored value is never
more than two seconds older than the session's last update, and exact whenever this
process lists sessions.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Final

__all__ = ["STAMP_INTERVAL", "Stamps", "Writes", "stamp_text"]

#: Seconds between two writes of one session's ``updated_at`` while it streams.
STAMP_INTERVAL: Final = 1.0

#: ``updated_at`` writes: ``(Unix time, session id)`` pairs.
Writes = list[tuple[float, str]]


def stamp_text(when: float) -> str:
    """``when`` (Unix time) as :func:`acp2.store.base.now_text` writes it."""
    moment = datetime.fromtimestamp(when, UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


class Stamps:
    """The ``updated_at`` writes one store owes: which are due now, which may wait."""

    __slots__ = ("_next_sweep", "_stale", "_written")

    def __init__(self) -> None:
        #: Sessions whose ``updated_at`` was written less than an interval ago (monotonic).
        self._written: dict[str, float] = {}
        #: Sessions touched since that write: the wall time of their last touch.
        self._stale: dict[str, float] = {}
        self._next_sweep = 0.0

    def wrote(self, session_id: str) -> None:
        """``session_id``'s ``updated_at`` was just written (e.g. it was created)."""
        self._written[session_id] = time.monotonic()
        self._stale.pop(session_id, None)

    def due(self, touched: Iterable[str]) -> Writes:
        """The writes a flush touching ``touched`` makes; the touches that may wait are
        remembered."""
        mono, wall = time.monotonic(), time.time()
        written, stale = self._written, self._stale
        out: Writes = []
        for session_id in touched:
            if session_id in written:
                stale[session_id] = wall
            else:
                written[session_id] = mono
                out.append((wall, session_id))
        if mono >= self._next_sweep:
            self._sweep(mono, out)
        return out

    def _sweep(self, mono: float, out: Writes) -> None:
        """Write the touches that waited an interval; forget writes older than that."""
        self._next_sweep = mono + STAMP_INTERVAL
        for session_id, at in list(self._written.items()):
            if mono - at < STAMP_INTERVAL:
                continue
            when = self._stale.pop(session_id, None)
            if when is None:
                del self._written[session_id]
            else:
                self._written[session_id] = mono
                out.append((when, session_id))

    def take(self, session_id: str) -> Writes:
        """The pending write of ``session_id`` (its lease ends, or it is deleted): now
        or never; it is forgotten either way."""
        self._written.pop(session_id, None)
        when = self._stale.pop(session_id, None)
        return [] if when is None else [(when, session_id)]

    def take_all(self) -> Writes:
        """Every pending write (a list is about to read the table)."""
        out = [(when, session_id) for session_id, when in self._stale.items()]
        self._stale.clear()
        return out

    def put_back(self, writes: Writes) -> None:
        """Writes a failed commit did not make: owed again (a newer touch wins)."""
        for when, session_id in writes:
            self._stale.setdefault(session_id, when)
            self._written.setdefault(session_id, 0.0)  # due at the next sweep

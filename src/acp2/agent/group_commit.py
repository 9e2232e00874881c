"""One store flush for every ``session/new`` handled in the same pass of the event loop.

A new session's row (and its lease) must be committed before its id is given to the
client; one commit per session made a burst of ``session/new`` cost a SQLite transaction
each (~110 µs of a 1,000-session run's ~280 µs per session, issue 25). The store queues
the rows (:meth:`acp2.store.queued.QueuedStore.open_session`); each handler then awaits
:meth:`GroupCommit.wait`, and the first waiter of a pass schedules one flush at the end
of that pass: the handlers started by one read of the client's requests share it. A
failed flush fails every waiter with the store's error (named, see
:mod:`acp2.store.failures`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

__all__ = ["GroupCommit"]


class GroupCommit:
    """Waiters of one event-loop pass share one call of ``flush``."""

    __slots__ = ("_flush", "_waiter")

    def __init__(self, flush: Callable[[], None]) -> None:
        self._flush = flush
        self._waiter: asyncio.Future[None] | None = None

    async def wait(self) -> None:
        """Return once a flush that started after this call succeeded; raise what it
        raised otherwise. Cancelling one waiter cancels neither the flush nor the others."""
        waiter = self._waiter
        if waiter is None:
            loop = asyncio.get_running_loop()
            waiter = self._waiter = loop.create_future()
            loop.call_soon(self._run, waiter)
        await asyncio.shield(waiter)

    def _run(self, waiter: asyncio.Future[None]) -> None:
        self._waiter = None
        try:
            self._flush()
        except BaseException as exc:  # every waiter fails with it, none waits forever
            waiter.set_exception(exc)
            waiter.exception()  # seen here: no "never retrieved" warning if nobody waits
            if not isinstance(exc, Exception):
                raise
        else:
            waiter.set_result(None)

"""Worker-thread runs that stop when the turn no longer waits for them.

A tool running in a thread is *abandoned* when the turn is cancelled (the turn ends at
once), but Python cannot kill a thread: without help it would go on walking a huge tree
or scanning a huge file in the background. So the long loops of the file tools take a
``stop`` callable and check it between files or chunks; :func:`run_stoppable` makes it
true as soon as the caller stops waiting (cancelled, or past its time limit).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

import anyio

from acp2.errors import StoppedError

__all__ = ["Stop", "StoppedError", "check", "never", "run_stoppable"]

T = TypeVar("T")

#: True when the work should end now.
Stop = Callable[[], bool]


def never() -> bool:
    """A :data:`Stop` that never fires."""
    return False


async def run_stoppable(fn: Callable[[Stop], T]) -> T:
    """Run ``fn(stop)`` in a worker thread; cancellation returns at once and fires ``stop``."""
    event = threading.Event()
    try:
        return await anyio.to_thread.run_sync(fn, event.is_set, abandon_on_cancel=True)
    finally:
        event.set()


def check(stop: Stop) -> None:
    """Raise :class:`StoppedError` when ``stop`` fires."""
    if stop():
        raise StoppedError

"""acp2's asyncio-specific tricks, all of them, each with what it bought.

acp2 runs on asyncio: the standard event loop or uvloop (both tested: ``ALL_LOOPS_SUITES`` in
``tests/conftest.py``); its API is written with anyio (cancel scopes, task groups,
events), but the hot paths below use asyncio directly because anyio's portable versions
cost measurably more per message. Numbers are from ``docs/benchmarks.md`` (the ledger);
nothing here touches a private attribute of the event loop. :func:`require_asyncio`
makes every other backend (trio) fail at once, with a clear error, instead of deep
inside a request.

Outside this module, two asyncio-specific parts remain where they belong: the stdio
transport reads its pipe in the loop's fd-readiness callback (``acp2.transport._fdio``,
ledger 8: ping 130 -> 83 us with 9) and the client's session wake-ups are plain
``asyncio.Event``\\ s (``acp2.client.session``, ledger 1).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Container, Coroutine
from typing import Any, Final, TypeVar

import anyio
from anyio.abc import TaskGroup

from acp2.errors import LocalProtocolError

__all__ = [
    "BACKEND_ERROR",
    "Event",
    "Task",
    "Tasks",
    "Waiter",
    "call_soon",
    "cancel_scope",
    "current_task",
    "name_asyncio_for_callbacks",
    "new_waiter",
    "open_task_group",
    "require_asyncio",
    "resolve",
    "yield_once",
]

T = TypeVar("T")

#: What entering a Connection under another async library says.
BACKEND_ERROR: Final = "acp2 runs on asyncio (uvloop works too)"


def require_asyncio() -> None:
    """Raise :class:`~acp2.errors.LocalProtocolError` unless an asyncio event loop (the
    standard one or uvloop) runs in this thread, e.g. under trio."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        raise LocalProtocolError(
            f"{BACKEND_ERROR}: no asyncio event loop is running here (trio is not supported)"
        ) from None


def name_asyncio_for_callbacks() -> None:
    """Let code run from the loop's callbacks see that it runs on asyncio: callbacks
    registered from the calling task (e.g. the stdio transport's readiness callback, which
    handles messages) inherit its context, where this sets sniffio's library name. Without
    it, ``anyio.CancelScope()`` in such a callback fails with ``NoEventLoopError`` when
    sniffio is installed and the loop was not started by ``anyio.run`` (``asyncio.run``,
    ``uvloop.run``): sniffio looks for a current task, and a callback has none."""
    try:
        import sniffio
    except ImportError:  # anyio then asks asyncio for the running loop: nothing to do
        return
    sniffio.current_async_library_cvar.set("asyncio")


#: A one-shot waiter (see :func:`new_waiter`) and a task, for annotations.
Waiter = asyncio.Future
Task = asyncio.Task

#: A plain asyncio event for waits that are not per message (the outbox's progress
#: signal): safe with many waiters and with a cancelled one, unlike a bare future, and
#: free of ``anyio.Event``'s backend lookup (~2 us each, ledger 1).
Event = asyncio.Event

#: The running task (reader checks). Measured: 0.1 us, ``anyio.get_current_task()`` 1.7 us.
current_task = asyncio.current_task

#: anyio's cancel scope class for asyncio, once :func:`cancel_scope` first ran (its
#: module is imported then, not at ``import acp2.client``: start-up stays as it was).
_scope_class: type[anyio.CancelScope] | None = None


def cancel_scope() -> anyio.CancelScope:
    """A new cancel scope: the object ``anyio.CancelScope()`` returns under asyncio,
    without the backend lookup that call makes each time (sniffio's current library,
    then the backend module). Measured (best of 15 x 20,000, a scope made, entered and
    left): 3.5 -> 2.7 us; two per prompt in the agent (the request's, the turn's)."""
    if _scope_class is None:
        return _load_scope_class()()
    return _scope_class()


def _load_scope_class() -> type[anyio.CancelScope]:
    global _scope_class
    try:
        from anyio._backends._asyncio import CancelScope
    except ImportError:  # pragma: no cover - another anyio layout: the portable class
        _scope_class = anyio.CancelScope
    else:
        _scope_class = CancelScope
    return _scope_class


def new_waiter() -> asyncio.Future[Any]:
    """A bare future as a one-shot waiter. Measured: ~0.2 us, an ``anyio.Event`` ~2 us
    (ledger 3, ~4 us per request). Resolve it with :func:`resolve`, never with an
    exception (an abandoned waiter then never logs "exception was never retrieved")."""
    return asyncio.get_running_loop().create_future()


def resolve(waiter: asyncio.Future[T], value: T) -> None:
    """Resolve ``waiter`` with ``value`` unless it is done (or was cancelled) already."""
    if not waiter.done():
        waiter.set_result(value)


def call_soon(callback: Callable[[], None]) -> None:
    """Run ``callback`` after the callbacks ready now, in the loop's next pass: the unit
    the outbox coalesces writes over (ledger 4 and 6: agent 9.8 -> 5.5 us/update)."""
    asyncio.get_running_loop().call_soon(callback)


def yield_once() -> Coroutine[Any, Any, None]:
    """Let every other ready task run once: a bare ``asyncio.sleep(0)`` (no cancel
    check; ``anyio.lowlevel.checkpoint()`` costs ~2 us more, ledger 6)."""
    return asyncio.sleep(0)


async def open_task_group() -> TaskGroup:
    """Enter a task group by hand (``Connection.__aenter__`` returns with it open, so
    no ``async with`` can hold it); the caller exits it with ``__aexit__``."""
    group = anyio.create_task_group()
    await group.__aenter__()
    return group


class Tasks:
    """Request handlers as plain asyncio tasks, tracked and awaited like task-group
    children (cancelled through each request's own anyio cancel scope). Measured: anyio's
    ``start_soon`` costs ~15-20 us per task (ledger 7: ping 130 -> 114 us).

    ``on_error(exc)`` is called for a task that ended with an exception.
    """

    __slots__ = ("_on_error", "_tasks")

    def __init__(self, on_error: Callable[[BaseException], None]) -> None:
        self._on_error = on_error
        self._tasks: set[asyncio.Task[Any]] = set()

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> None:
        """Start ``coro`` in a new task now."""
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and (exc := task.exception()) is not None:
            self._on_error(exc)

    def cancel(self, spare: Container[asyncio.Task[Any]] = ()) -> None:
        """Cancel every task still running (as leaving a cancelled task group does), but
        those in ``spare`` (work shielded from this cancel: :meth:`wait` still waits)."""
        for task in self._tasks:
            if task not in spare:
                task.cancel()

    async def wait(self) -> None:
        """Return once every task has ended (shielded from cancellation)."""
        with anyio.CancelScope(shield=True):
            while self._tasks:
                await asyncio.wait(list(self._tasks))

    def __len__(self) -> int:
        return len(self._tasks)

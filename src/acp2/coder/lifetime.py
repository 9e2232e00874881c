"""The coding agent's process lifetime: serve on stdio, stop cleanly, leave no command behind.

:func:`serve_until_stopped` serves an :class:`~acp2.agent.Agent` on stdin/stdout until
stdin reaches end-of-file or the process gets SIGTERM, SIGINT or SIGHUP. Either way the
connection is cancelled, so every running turn is cancelled and every running command's
process group is stopped (SIGTERM, then SIGKILL after its grace period) before the
function returns; as a last resort it SIGKILLs whatever group is still registered. A second
signal during that shutdown has its default effect (the process dies), and then the
kernel's parent-death signal and the watchdog of :mod:`acp2.coder.tools.reaper` take over.

Before serving, the process makes itself non-dumpable (:func:`hide_process`), so that an
unconfined command of the same (non-root) user cannot read the agent's environment or
memory from ``/proc``.
"""

from __future__ import annotations

import ctypes
import signal
import sys
from typing import TYPE_CHECKING

import anyio
from anyio import CancelScope

from acp2.coder.tools import reaper

if TYPE_CHECKING:
    from acp2.agent import Agent

__all__ = ["STOP_SIGNALS", "hide_process", "serve_until_stopped"]

_PR_SET_DUMPABLE = 4

#: Signals that stop the agent cleanly.
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


def serve_until_stopped(agent: Agent) -> int:
    """Serve ``agent`` on stdio; return 0 at end of input, 128 + the signal number after a
    stop signal. Every command the agent started is gone when this returns.

    The process is made non-dumpable first (see :func:`hide_process`)."""
    hide_process()
    received: list[int] = []
    try:
        anyio.run(_serve, agent, received)
    finally:
        reaper.kill_all()
    return 128 + received[0] if received else 0


def hide_process() -> bool:
    """Make this process non-dumpable (``PR_SET_DUMPABLE 0``, Linux): processes of the same
    user without ``CAP_SYS_PTRACE`` -- an unsandboxed command of a non-root agent -- can
    then neither ptrace it nor read its ``/proc/<pid>/environ`` or memory, where the API
    key is. Debuggers cannot attach either, and it writes no core dump. True when done."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):  # pragma: no cover - no libc symbols
        return False
    return bool(prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0) == 0)


async def _serve(agent: Agent, received: list[int]) -> None:
    async with anyio.create_task_group() as tg:
        await tg.start(_stop_on_signal, tg.cancel_scope, received)
        await agent.serve_stdio()
        tg.cancel_scope.cancel()


async def _stop_on_signal(
    scope: CancelScope, received: list[int], *, task_status: anyio.abc.TaskStatus[None]
) -> None:
    with anyio.open_signal_receiver(*STOP_SIGNALS) as signals:
        task_status.started()
        async for signum in signals:
            received.append(int(signum))
            scope.cancel()
            return

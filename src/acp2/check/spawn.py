"""Starting and stopping agent processes (their own process group, always reaped)."""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Mapping, Sequence

import anyio
from anyio.abc import Process

from acp2.diagnose import start_failure
from acp2.errors import AgentStartError

__all__ = ["AgentStartError", "start_process", "stop_process"]


async def start_process(
    argv: Sequence[str], *, cwd: str | None = None, env: Mapping[str, str] | None = None
) -> Process:
    """Start ``argv`` with piped stdio in a new process group (POSIX).

    Raises :class:`AgentStartError` when the command cannot be started; its message says
    why and what to do (e.g. ``command not found: NAME`` with an ``npx`` / ``uvx`` hint).
    """
    try:
        return await anyio.open_process(
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=dict(env) if env is not None else None,
            start_new_session=hasattr(os, "killpg"),
        )
    except OSError as exc:
        raise AgentStartError(start_failure(argv, exc, cwd)) from exc


async def stop_process(process: Process, grace: float = 2.0) -> None:
    """Wait ``grace`` seconds for a process whose stdin is closed, then SIGTERM and
    SIGKILL its process group until it is reaped. Safe to call on an exited process."""
    for sig, wait in ((None, grace), (signal.SIGTERM, 1.0), (signal.SIGKILL, 5.0)):
        if sig is not None:
            _signal_group(process, sig)
        with anyio.move_on_after(wait):
            await process.wait()
            return


def _signal_group(process: Process, sig: int) -> None:
    try:
        if hasattr(os, "killpg"):
            os.killpg(process.pid, sig)
        else:  # pragma: no cover - Windows
            process.terminate()
    except (ProcessLookupError, PermissionError):
        pass

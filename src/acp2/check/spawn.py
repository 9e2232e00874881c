"""Starting agent processes: piped stdio, their own process group.

Stopping them is :func:`acp2.transport.procgroup.stop_group`, the one process-group
shutdown acp2 has. The checker judges TR-06 with its own waits before that clean-up
starts, so sharing it with the runtimes hides nothing from the checker.
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping, Sequence

import anyio
from anyio.abc import Process

from acp2.diagnose import start_failure
from acp2.errors import AgentStartError

__all__ = ["AgentStartError", "start_process"]


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
            start_new_session=True,
        )
    except OSError as exc:
        raise AgentStartError(start_failure(argv, exc, cwd)) from exc

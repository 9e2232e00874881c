"""``!command`` in the terminal chat: run a shell command here, show its output, and
offer it to the agent with the next prompt -- never as a prompt of its own.

The command runs with the user's shell and environment, in the session folder when the
agent runs on this machine (else in the chat's own folder), with no input. Its output
(stdout and stderr together) is shown sanitized (:func:`acp2.sanitize.terminal`: no
escape sequence of its own reaches the terminal), its last :data:`SHOWN_LINES` lines, then
its exit status. Ctrl-C stops it. At most :data:`KEPT_BYTES` of output are kept (the
tail), so a command that floods cannot grow the chat without bound.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

import anyio
from anyio.abc import TaskStatus

from acp2 import sanitize
from acp2.client import describe

__all__ = [
    "KEPT_BYTES",
    "SHOWN_LINES",
    "ShellResult",
    "context_text",
    "result_lines",
    "run",
    "run_stoppable",
]

#: Bytes of output kept (its tail).
KEPT_BYTES: Final = 256 * 1024
#: Lines of output shown (its tail).
SHOWN_LINES: Final = 40


@dataclass
class ShellResult:
    """A finished (or stopped) command: its ``output`` sanitized for a terminal, its
    exit ``status`` (None when stopped with Ctrl-C), ``cut`` when output was dropped."""

    command: str
    output: str
    status: int | None
    cut: bool = False


async def run(command: str, cwd: str) -> ShellResult:
    """Run ``command`` with the shell in ``cwd``; cancelling the caller stops it."""
    kept = bytearray()
    cut = False
    process = await anyio.open_process(
        command, cwd=cwd, stdin=subprocess.DEVNULL, stderr=subprocess.STDOUT
    )
    try:
        assert process.stdout is not None
        async for chunk in process.stdout:
            kept += chunk
            if len(kept) > KEPT_BYTES:
                del kept[: len(kept) - KEPT_BYTES]
                cut = True
        status: int | None = await process.wait()
    finally:
        if process.returncode is None:  # stopped: Ctrl-C cancelled the reading
            process.kill()
            with anyio.CancelScope(shield=True):
                await process.wait()
    if process.returncode is not None and process.returncode < 0:
        status = None
    output = sanitize.terminal(kept.decode("utf-8", "replace"))
    return ShellResult(command, output, status, cut)


def result_lines(result: ShellResult) -> list[str]:
    """What the chat shows: the output's last lines (``… N earlier lines``), then
    ``exit N`` / ``stopped``."""
    hidden, lines = describe.tail(result.output.rstrip("\n"), SHOWN_LINES)
    head = [f"… {hidden} earlier lines"] if hidden else []
    if result.cut:
        head = ["… earlier output dropped"]
    ended = "stopped" if result.status is None else f"exit {result.status}"
    return [*head, *lines, f"[{ended}]"]


def context_text(result: ShellResult) -> str:
    """The text that goes with the next prompt: the command, its output and status."""
    body = "\n".join(result_lines(result)[:-1])
    ended = "stopped" if result.status is None else f"exit status {result.status}"
    return f"I ran `{result.command}` in my shell ({ended}); its output:\n```\n{body}\n```"


async def run_stoppable(
    command: str, cwd: str, started: Callable[[], None] | None = None
) -> ShellResult | None:
    """:func:`run`, stopped by Ctrl-C (SIGINT) while it runs: None when stopped.
    ``started`` is called once Ctrl-C stops it (before that, Ctrl-C is the chat's)."""
    import signal

    result: ShellResult | None = None
    async with anyio.create_task_group() as group:

        async def stop_on_ctrl_c(*, task_status: TaskStatus[None]) -> None:
            with anyio.open_signal_receiver(signal.SIGINT) as signals:
                task_status.started()
                async for _ in signals:
                    group.cancel_scope.cancel()
                    return

        await group.start(stop_on_ctrl_c)
        if started is not None:
            started()
        try:
            result = await run(command, cwd)
        finally:
            group.cancel_scope.cancel()
    return result

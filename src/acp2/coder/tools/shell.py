"""The ``run_command`` tool: a shell command in its own process group.

Output (stdout and stderr merged) streams to an :class:`OutputSink` as it arrives; the
model gets the tail of it. The command runs in a new session (``start_new_session``), so
its whole process group can be stopped: on timeout, on cancellation (anyio cancel scope),
and after a normal exit (background leftovers that would hold the pipe open). Stopping
sends SIGTERM, waits ``grace`` seconds, then SIGKILL.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from dataclasses import dataclass
from typing import Protocol

import anyio
from anyio.abc import Process

__all__ = ["CommandResult", "OutputSink", "run_command"]

#: Bytes of output kept for the model (the tail).
TAIL_BYTES = 16_000


class OutputSink(Protocol):
    """Where a command's bytes go (a display-only terminal implements it)."""

    async def write(self, data: bytes) -> None:
        """Append output bytes."""

    async def exit(self, exit_code: int | None = None, signal: str | None = None) -> None:
        """Report how the command ended."""


@dataclass(frozen=True)
class CommandResult:
    """How a command ended: ``exit_code`` or ``signal``, ``timed_out``, and the output tail."""

    exit_code: int | None
    signal: str | None
    timed_out: bool
    output: str

    @property
    def ok(self) -> bool:
        """True when the command exited with status 0."""
        return self.exit_code == 0


async def run_command(
    command: str, *, cwd: str, time_limit: float, sink: OutputSink, grace: float = 2.0
) -> CommandResult:
    """Run ``command`` with the shell in ``cwd``; stream its output to ``sink``.

    Always reports the exit to ``sink`` (also when cancelled), and never returns or
    raises while a process of its group is still running (unless it ignored SIGKILL).
    """
    process = await anyio.open_process(
        command,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    tail = bytearray()
    timed_out = False
    try:
        async with anyio.create_task_group() as tg:
            drained = anyio.Event()
            tg.start_soon(_pump, process, sink, tail, drained)
            with anyio.move_on_after(time_limit) as deadline:
                await process.wait()
            timed_out = deadline.cancelled_caught
            await _stop_group(process, grace)
            with anyio.move_on_after(grace):
                await drained.wait()
            tg.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):
            await _stop_group(process, grace)
            await process.aclose()
            code, name = _status(process.returncode)
            await sink.exit(code, name)
    code, name = _status(process.returncode)
    return CommandResult(code, name, timed_out, _text(tail))


async def _pump(process: Process, sink: OutputSink, tail: bytearray, drained: anyio.Event) -> None:
    assert process.stdout is not None
    try:
        async for chunk in process.stdout:
            tail.extend(chunk)
            if len(tail) > TAIL_BYTES * 2:
                del tail[:-TAIL_BYTES]
            await sink.write(chunk)
    except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
        pass
    finally:
        drained.set()


async def _stop_group(process: Process, grace: float) -> None:
    """Stop every process of the command's group; the leader is reaped when it was alive."""
    if process.returncode is not None:
        _signal_group(process.pid, signal.SIGKILL)  # leftovers of a finished command
        return
    _signal_group(process.pid, signal.SIGTERM)
    with anyio.move_on_after(grace):
        await process.wait()
        _signal_group(process.pid, signal.SIGKILL)
        return
    _signal_group(process.pid, signal.SIGKILL)
    with anyio.move_on_after(grace):
        await process.wait()


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def _status(returncode: int | None) -> tuple[int | None, str | None]:
    if returncode is None:
        return None, None
    if returncode < 0:
        try:
            return None, signal.Signals(-returncode).name
        except ValueError:
            return None, f"SIG{-returncode}"
    return returncode, None


def _text(tail: bytearray) -> str:
    data = bytes(tail)
    if len(data) > TAIL_BYTES:
        data = data[-TAIL_BYTES:]
        return "[... earlier output omitted ...]\n" + data.decode("utf-8", errors="replace")
    return data.decode("utf-8", errors="replace")

"""The ``run_command`` tool: a shell command, confined when possible, never orphaned.

The command runs with a scrubbed environment (:mod:`acp2.coder.tools.command_env`),
inside the sandbox that :func:`acp2.coder.tools.confine.choose` picked for the policy
(bubblewrap, Landlock, or none), in a new session (``start_new_session``) so its whole
process group can be stopped, and with ``PR_SET_PDEATHSIG`` so the kernel kills it if the
agent dies (see :mod:`acp2.coder.tools.reaper`). It is started from the calling (event
loop) thread: the death signal follows the thread that forked.

Output (stdout and stderr merged) streams to an :class:`OutputSink` as it arrives; the
model gets the tail of it. The group is stopped on timeout, on cancellation (anyio cancel
scope), and after a normal exit (background leftovers that would hold the pipe open).
Stopping sends SIGTERM, waits ``grace`` seconds, then SIGKILL.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import anyio

from acp2.coder.tools import reaper
from acp2.coder.tools.confine import CommandPolicy, Confinement, Launch, choose, plan_launch
from acp2.coder.tools.errors import ToolError

__all__ = ["CommandResult", "OutputSink", "run_command"]

#: Bytes of output kept for the model (the tail).
TAIL_BYTES = 16_000
_READ_SIZE = 65_536


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
    command: str,
    *,
    cwd: str,
    time_limit: float,
    sink: OutputSink,
    grace: float = 2.0,
    policy: CommandPolicy | None = None,
    roots: Sequence[str] | None = None,
) -> CommandResult:
    """Run ``command`` with the shell in ``cwd``; stream its output to ``sink``.

    ``policy`` (default: :class:`CommandPolicy`, the best sandbox available, no network)
    says how to confine it; ``roots`` are the directories it may write (default ``cwd``).
    Raises ToolError when the policy requires a sandbox this machine lacks. Always reports
    the exit to ``sink`` once started, and never returns or raises while a process of its
    group is still running (unless it ignored SIGKILL).
    """
    policy = policy or CommandPolicy()
    confinement = await anyio.to_thread.run_sync(choose, policy)
    if confinement.kind == "refused":
        raise ToolError(f"The command was not run: {confinement.reason}.")
    launch = await anyio.to_thread.run_sync(_plan, confinement, policy, command, cwd, roots)
    try:
        child = _Child.spawn(launch, cwd, confinement)
        try:
            return await _supervise(child, sink, time_limit, grace)
        finally:
            child.close()
    finally:
        launch.cleanup()


def _plan(
    confinement: Confinement,
    policy: CommandPolicy,
    command: str,
    cwd: str,
    roots: Sequence[str] | None,
) -> Launch:
    writable = list(roots or [os.path.realpath(cwd)])
    return plan_launch(confinement, policy, command, cwd=cwd, roots=writable)


async def _supervise(
    child: _Child, sink: OutputSink, time_limit: float, grace: float
) -> CommandResult:
    tail = bytearray()
    timed_out = False
    try:
        async with anyio.create_task_group() as tg:
            drained = anyio.Event()
            tg.start_soon(_pump, child.output, sink, tail, drained)
            with anyio.move_on_after(time_limit) as deadline:
                await child.wait()
            timed_out = deadline.cancelled_caught
            await child.stop_group(grace)
            with anyio.move_on_after(grace):
                await drained.wait()
            tg.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):
            await child.stop_group(grace)
            code, name = child.status()
            await sink.exit(code, name)
    code, name = child.status()
    return CommandResult(code, name, timed_out, _text(tail))


class _Child:
    """A started command: its Popen, a non-blocking output fd, and a pidfd to await."""

    def __init__(self, popen: subprocess.Popen[bytes], watched: bool) -> None:
        self.popen = popen
        #: Under bubblewrap (not watched) SIGTERM spares bwrap itself: it would die of it
        #: and take the sandbox down without the grace period.
        self._spare_leader = not watched
        self._stopped = False
        assert popen.stdout is not None
        self.output = popen.stdout.fileno()
        os.set_blocking(self.output, False)
        self._pidfd = _pidfd(popen.pid)
        reaper.remember(popen.pid, watch=watched)

    @classmethod
    def spawn(cls, launch: Launch, cwd: str, confinement: Confinement) -> _Child:
        """Start ``launch`` in a new session, with the parent-death signal set first.

        ``preexec_fn`` runs after ``setsid`` and before the fds are closed and the program
        executed; it only makes system calls (no locks, no imports), the part of Python
        that is safe between fork and exec in a process with threads."""
        parent, steps = os.getpid(), launch.child_steps

        def in_child() -> None:
            reaper.set_parent_death_signal(parent)
            for step in steps:
                step()

        try:
            popen = subprocess.Popen(
                launch.argv,
                cwd=cwd,
                env=launch.env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=in_child,
            )
        except subprocess.SubprocessError as exc:  # a step in the child failed
            message = f"The command could not be started ({confinement.kind}): {exc}"
            raise ToolError(message) from None
        # Under bubblewrap the command has its own pid namespace, emptied when bwrap dies.
        return cls(popen, watched=confinement.kind != "bubblewrap")

    async def wait(self) -> int:
        """Wait until the group leader exited; return its status."""
        if self.popen.returncode is None:
            if self._pidfd is not None:
                await anyio.wait_readable(self._pidfd)
            else:  # pragma: no cover - kernels without pidfd_open
                await anyio.to_thread.run_sync(self.popen.wait, abandon_on_cancel=True)
        return self.popen.wait()

    async def stop_group(self, grace: float) -> None:
        """Stop every process of the group; the leader is reaped when it was alive."""
        pgid = self.popen.pid
        if self.popen.poll() is not None:
            _signal_group(pgid, signal.SIGKILL)  # leftovers of a finished command
            return
        self._stopped = True
        if self._spare_leader:
            _signal_members(pgid, signal.SIGTERM)
        else:
            _signal_group(pgid, signal.SIGTERM)
        with anyio.move_on_after(grace):
            await self.wait()
            _signal_group(pgid, signal.SIGKILL)
            return
        _signal_group(pgid, signal.SIGKILL)
        with anyio.move_on_after(grace):
            await self.wait()

    def status(self) -> tuple[int | None, str | None]:
        """``(exit_code, signal_name)``; bubblewrap reports a command killed by signal N
        as status 128 + N, which is read back as the signal once we stopped it."""
        code = self.popen.returncode
        if self._spare_leader and self._stopped and code is not None and 128 < code < 128 + 65:
            code = -(code - 128)
        return _status(code)

    def close(self) -> None:
        """Release the fds and the group's registration (after :meth:`stop_group`)."""
        reaper.forget(self.popen.pid)
        if self._pidfd is not None:
            os.close(self._pidfd)
            self._pidfd = None
        assert self.popen.stdout is not None
        self.popen.stdout.close()


def _pidfd(pid: int) -> int | None:
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):  # pragma: no cover - not Linux 5.3+
        return None


async def _pump(fd: int, sink: OutputSink, tail: bytearray, drained: anyio.Event) -> None:
    try:
        while chunk := await _read(fd):
            tail.extend(chunk)
            if len(tail) > TAIL_BYTES * 2:
                del tail[:-TAIL_BYTES]
            await sink.write(chunk)
    finally:
        drained.set()


async def _read(fd: int) -> bytes:
    """The next chunk of ``fd`` (b"" at end of file)."""
    while True:
        await anyio.wait_readable(fd)
        try:
            return os.read(fd, _READ_SIZE)
        except BlockingIOError:
            continue


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def _signal_members(pgid: int, sig: signal.Signals) -> None:
    """Signal every process of group ``pgid`` but its leader (Linux ``/proc``; elsewhere
    the whole group)."""
    try:
        entries = [int(e) for e in os.listdir("/proc") if e.isdigit() and int(e) != pgid]
    except OSError:
        _signal_group(pgid, sig)
        return
    for pid in entries:
        try:
            with open(f"/proc/{pid}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, sig)


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

"""The stdio transport (TR-02..TR-06): spawn an agent, or serve on our own stdin/stdout.

Client side, :func:`spawn_agent` starts the agent in its own process group with three
pipes: the protocol on stdin/stdout, and stderr drained continuously into a bounded tail
(so a chatty agent never blocks, TR-05). Leaving the ``async with`` ends the connection
the way TR-06 describes, through :func:`acp2.transport.procgroup.stop_group`: close
stdin, wait a grace period, SIGTERM the process group, wait again, SIGKILL, and reap --
no zombies, and no helper of the agent left running in its group.

Agent side, :func:`serve_stdio` moves the protocol to private duplicates of fds 0 and 1,
points fd 1 (and so ``sys.stdout`` and child processes) at stderr and fd 0 at
``/dev/null``: a stray ``print`` or ``input`` can never corrupt the stream (TR-03).

POSIX only. Reads are plain non-blocking ``os.read`` calls of ``read_size`` bytes.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import sys
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import Final

import anyio

from acp2.transport._fdio import DEFAULT_READ_SIZE, FdReader, FdWriter
from acp2.transport._stderr import StderrPump, StderrSink
from acp2.transport.procgroup import DEFAULT_GRACE, StopOutcome, stop_group

__all__ = ["DEFAULT_GRACE", "AgentProcess", "StdioTransport", "serve_stdio", "spawn_agent"]

#: Pipe capacity requested for the protocol pipes (Linux; fewer wake-ups under load).
PIPE_SIZE: Final = 1024 * 1024


class StdioTransport:
    """A :class:`~acp2.transport.base.Transport` over two fds (read side, write side)."""

    def __init__(self, reader: FdReader, writer: FdWriter) -> None:
        self._reader = reader
        self._writer = writer

    async def receive(self) -> bytes:
        """Return the next chunk read; ``b""`` at end of stream or after :meth:`aclose`."""
        return await self._reader.read()

    async def send(self, data: bytes) -> None:
        """Write all of ``data``; raises ``ConnectionClosed`` if the other side is gone."""
        await self._writer.write(data)

    async def pump(self, consume: Callable[[bytes], bool]) -> bool:
        """Hand chunks to ``consume`` as they arrive (see
        :class:`~acp2.transport.base.DirectReceive`); True: it stopped, False: end of stream."""
        return await self._reader.pump(consume)

    def send_nowait(self, data: bytes) -> int:
        """Write what fits in the pipe now; return how many bytes were taken (maybe 0).

        Raises ``ConnectionClosed`` if the other side is gone (see
        :class:`~acp2.transport.base.DirectSend`).
        """
        return self._writer.write_nowait(data)

    async def aclose(self) -> None:
        """Close both directions (the peer sees end of input). Idempotent."""
        self._writer.close()
        self._reader.close()


class AgentProcess(StdioTransport):
    """A spawned agent: the Transport over its stdin/stdout, plus process facts."""

    def __init__(
        self,
        process: asyncio.subprocess.Process,
        stdout: FdReader,
        stdin: FdWriter,
        stderr: StderrPump,
    ) -> None:
        super().__init__(stdout, stdin)
        self._process = process
        self._stderr = stderr

    @property
    def pid(self) -> int:
        """The agent's process id (also its process group id)."""
        return self._process.pid

    @property
    def returncode(self) -> int | None:
        """The exit status once reaped (negative: killed by that signal); else None."""
        return self._process.returncode

    def stderr_tail(self) -> str:
        """Return the last bytes the agent wrote to stderr (for error messages)."""
        return self._stderr.tail()

    async def wait_stderr(self, seconds: float) -> bool:
        """Wait up to ``seconds`` for the agent's stderr to reach end of stream (so its
        tail holds the last words of an agent that has just died); True once it has."""
        with anyio.move_on_after(seconds):
            await self._stderr.wait_finished()
        return self._stderr.finished

    async def wait_exit(self, seconds: float) -> bool:
        """Wait up to ``seconds`` for the agent to exit; True once it has (never kills)."""
        with anyio.move_on_after(seconds):
            await self._process.wait()
        return self._process.returncode is not None

    async def _shutdown(self, grace: float) -> StopOutcome:
        """Stop the agent and its process group (:func:`~acp2.transport.procgroup.stop_group`
        with ``grace`` for both polite waits); always reaps."""
        outcome = await stop_group(self._process, self._close_stdin, grace=grace, term_grace=grace)
        self._reader.close()
        return outcome

    async def _close_stdin(self) -> None:
        self._writer.close()


def _pipe() -> tuple[int, int]:
    r, w = os.pipe()
    with contextlib.suppress(OSError, AttributeError):
        fcntl.fcntl(w, fcntl.F_SETPIPE_SZ, PIPE_SIZE)
    return r, w


@contextlib.asynccontextmanager
async def spawn_agent(
    argv: Sequence[str],
    *,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    stderr: StderrSink = None,
    grace: float = DEFAULT_GRACE,
    read_size: int = DEFAULT_READ_SIZE,
) -> AsyncIterator[AgentProcess]:
    """Start ``argv`` as an agent subprocess and yield its :class:`AgentProcess`.

    ``env=None`` inherits our environment. ``stderr`` is where the agent's stderr is
    forwarded (a callable getting lines, a logger, or a file); it is always drained and
    its tail kept. On exit: stdin is closed, then after ``grace`` seconds SIGTERM, then
    after ``grace`` more SIGKILL, sent to the agent's process group, until the agent is
    reaped and its group is empty (bounded: see :func:`~acp2.transport.procgroup.stop_group`;
    ``grace`` defaults to :data:`~acp2.transport.procgroup.DEFAULT_GRACE`).
    Raises ``OSError`` (e.g. ``FileNotFoundError``) when it cannot be started.
    """
    in_r, in_w = _pipe()
    out_r, out_w = _pipe()
    err_r, err_w = os.pipe()
    try:
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=in_r,
            stdout=out_w,
            stderr=err_w,
            cwd=cwd,
            env=None if env is None else dict(env),
            start_new_session=True,
        )
    except BaseException:
        for fd in (in_w, out_r, err_r):
            os.close(fd)
        raise
    finally:
        for fd in (in_r, out_w, err_w):
            os.close(fd)
    pump = StderrPump(err_r, stderr)
    agent = AgentProcess(process, FdReader(out_r, read_size=read_size), FdWriter(in_w), pump)
    async with anyio.create_task_group() as tg:
        tg.start_soon(pump.run, name=f"acp2 stderr pump ({process.pid})")
        try:
            yield agent
        finally:
            with anyio.CancelScope(shield=True):
                await agent._shutdown(grace)
                with anyio.move_on_after(grace):
                    # stderr ends at EOF; a grandchild still holding it open is cut off
                    await pump.wait_finished()
                pump.close()
                tg.cancel_scope.cancel()


@contextlib.asynccontextmanager
async def serve_stdio(*, read_size: int = DEFAULT_READ_SIZE) -> AsyncIterator[StdioTransport]:
    """Yield a Transport on this process's own stdin/stdout (the agent side).

    While inside, fd 1 and ``sys.stdout`` write to stderr and fd 0 reads ``/dev/null``,
    so stray prints and reads never touch the protocol stream (TR-03). Both are restored
    on exit.
    """
    if sys.stdout is not None:
        sys.stdout.flush()
    proto_in, proto_out = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDWR)
    try:
        os.dup2(devnull, 0)
        try:
            os.dup2(2, 1)
        except OSError:  # no stderr at all: stray output is discarded
            os.dup2(devnull, 1)
    finally:
        os.close(devnull)
    reader = FdReader(proto_in, read_size=read_size, close_fd=False)
    writer = FdWriter(proto_out, close_fd=False)
    transport = StdioTransport(reader, writer)
    try:
        yield transport
    finally:
        await transport.aclose()
        if sys.stdout is not None:
            with contextlib.suppress(Exception):
                sys.stdout.flush()
        os.dup2(proto_in, 0)
        os.dup2(proto_out, 1)
        os.close(proto_in)
        os.close(proto_out)

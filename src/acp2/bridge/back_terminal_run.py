"""One terminal of the back bridge (:mod:`acp2.bridge.back_terminal`): its process, its
bounded output, and its v2 display terminal.

The process leads its own process group (``start_new_session``), reads ``/dev/null`` and
writes stdout and stderr into one pipe that only :meth:`RunningTerminal.run` reads, so
nothing of it reaches our own terminal. The output kept is the last ``limit`` bytes
(:class:`OutputBuffer`, cut at a UTF-8 character boundary); every chunk read also goes to
``show`` as a v2 ``terminal_output_chunk``, and once the client's copy would pass twice
:data:`OUTPUT_CAP` since the last snapshot, a ``terminal_update`` snapshot of the kept
bytes replaces it instead, so the v2 client's copy stays bounded too.
"""

from __future__ import annotations

import base64
import codecs
import os
import shlex
import signal
import subprocess
from collections.abc import Callable
from typing import Any, Final

import anyio
from anyio.abc import Process

import acp2.compat.v1.schema as v1
import acp2.schema as v2
from acp2.errors import InvalidRequest
from acp2.transport.procgroup import stop_group

__all__ = ["DRAIN_WAIT", "OUTPUT_CAP", "OutputBuffer", "RunningTerminal", "command_line"]

#: The most output bytes kept per terminal, whatever ``outputByteLimit`` asks.
OUTPUT_CAP: Final = 1024 * 1024
#: Seconds to read what is left in the pipe after the command exited.
DRAIN_WAIT: Final = 0.5
_READ_SIZE: Final = 65_536
# Stopping a command: SIGTERM, then SIGKILL after this many seconds.
_TERM_GRACE: Final = 2.0
# A command without args holding one of these is a shell line, not a program name.
_SHELL_CHARACTERS: Final = frozenset(" \t\n;&|<>()$`\\\"'*?[]#~=%{}!")

#: Sends v2 session updates of the terminal's session to the v2 client.
Show = Callable[[list[Any]], None]


class OutputBuffer:
    """The bytes kept of one terminal's output: the last ``limit``, cut at a character."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.data = bytearray()
        #: True once bytes were dropped from the start.
        self.truncated = False

    def add(self, chunk: bytes) -> None:
        """Append ``chunk``; drop from the start past ``limit``, never inside a character."""
        self.data += chunk
        cut = len(self.data) - self.limit
        if cut <= 0:
            return
        while cut < len(self.data) and self.data[cut] & 0xC0 == 0x80:  # continuation byte
            cut += 1
        del self.data[:cut]
        self.truncated = True

    def text(self, final: bool) -> str:
        """The kept bytes as text (invalid UTF-8 replaced); until ``final`` a character
        the command has written only half of is left out."""
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        return decoder.decode(bytes(self.data), final)


def command_line(request: v1.CreateTerminalRequest, cwd: str) -> tuple[list[str], str]:
    """The argv to execute for ``request`` and the command line to show.

    A ``command`` without ``args`` that holds a space or another shell character and is
    not a file (relative to ``cwd``) is a shell line, as agents send ``"ls -la"``: it
    runs with ``/bin/sh -c``."""
    args = request.args if isinstance(request.args, list) else []
    command = request.command
    shell_line = not args and bool(_SHELL_CHARACTERS.intersection(command))
    if shell_line and not os.path.isfile(os.path.join(cwd, command)):
        return ["/bin/sh", "-c", command], command
    argv = [command, *args]
    return argv, shlex.join(argv)


def _env(request: v1.CreateTerminalRequest) -> dict[str, str]:
    # The agent already runs with our environment; the request adds to it.
    env = dict(os.environ)
    for var in request.env if isinstance(request.env, list) else []:
        env[var.name] = var.value
    return env


def _limit(request: v1.CreateTerminalRequest) -> int:
    asked = request.output_byte_limit
    return min(asked, OUTPUT_CAP) if isinstance(asked, int) else OUTPUT_CAP


def _exit_status(code: int) -> tuple[int | None, str | None]:
    if code >= 0:
        return code, None
    try:
        return None, signal.Signals(-code).name
    except ValueError:
        return None, f"SIG{-code}"


def _b64(data: bytes | bytearray) -> str:
    return base64.b64encode(data).decode("ascii")


class RunningTerminal:
    """One started terminal: :meth:`start` it, run :meth:`run` in a task, :meth:`stop` it."""

    def __init__(
        self, terminal_id: str, session_id: str, process: Process, limit: int, show: Show
    ) -> None:
        self.id = terminal_id
        self.session_id = session_id
        self.process = process
        self.output = OutputBuffer(limit)
        #: Set once the command exited and its last output was read.
        self.exited = anyio.Event()
        #: ``(exitCode, signal)`` once exited.
        self.status: tuple[int | None, str | None] = (None, None)
        self._show = show
        self._forwarded = 0  # bytes the v2 client holds since its last snapshot

    @classmethod
    async def start(
        cls,
        request: v1.CreateTerminalRequest,
        terminal_id: str,
        argv: list[str],
        cwd: str,
        show: Show,
    ) -> RunningTerminal:
        """Start ``argv`` in ``cwd`` for ``request``; ``InvalidRequest`` if it cannot be."""
        try:
            process = await anyio.open_process(
                argv,
                cwd=cwd,
                env=_env(request),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        except OSError as exc:
            raise InvalidRequest(f"cannot start {argv[0]!r}: {exc.strerror or exc}") from None
        return cls(terminal_id, request.session_id, process, _limit(request), show)

    def exit_status(self) -> v1.TerminalExitStatus | None:
        """The v1 exit status, None while the command runs."""
        if not self.exited.is_set():
            return None
        code, sig = self.status
        return v1.TerminalExitStatus(exit_code=code, signal=sig)

    async def stop(self) -> None:
        """Stop the process group (SIGTERM, then SIGKILL); shielded, bounded, idempotent."""
        await stop_group(self.process, grace=0, term_grace=_TERM_GRACE)

    async def run(self) -> None:
        """Read the output until the command exited (and its pipe drained, at most
        :data:`DRAIN_WAIT` seconds more); then record and show the exit status."""
        drained = anyio.Event()
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._pump, drained)
            code = await self.process.wait()
            with anyio.move_on_after(DRAIN_WAIT):
                await drained.wait()  # output written before the exit is in the pipe
            self.status = _exit_status(code)
            self.exited.set()
            exit_code, sig = self.status
            status = v2.TerminalExitStatus(exit_code=exit_code, signal=sig)
            self._show([v2.TerminalUpdate(terminal_id=self.id, exit_status=status)])

    async def _pump(self, drained: anyio.Event) -> None:
        stdout = self.process.stdout
        assert stdout is not None
        try:
            while True:
                try:
                    chunk = await stdout.receive(_READ_SIZE)
                except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
                    return
                self.output.add(chunk)
                self._forward(chunk)
        finally:
            drained.set()
            await stdout.aclose()

    def _forward(self, chunk: bytes) -> None:
        self._forwarded += len(chunk)
        update: Any
        if self._forwarded > 2 * OUTPUT_CAP:
            # The client keeps every byte it gets: replace its copy by the bytes we keep.
            kept = self.output.data
            self._forwarded = len(kept)
            update = v2.TerminalUpdate(
                terminal_id=self.id, output=v2.TerminalOutput(data=_b64(kept))
            )
        else:
            update = v2.TerminalOutputChunk(terminal_id=self.id, data=_b64(chunk))
        self._show([update])

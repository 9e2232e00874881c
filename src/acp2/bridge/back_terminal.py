"""The v1 ``terminal/*`` requests a v1 agent sends its client, served by the back bridge.

Each ``terminal/create`` is asked first (``ask``: a v2 permission request with a
``command`` subject naming the command, its directory and the new terminal's id); only an
``allow`` runs it. The command runs as a real subprocess leading its own process group
(``start_new_session``), with stdin from ``/dev/null`` and stdout and stderr merged into
one pipe that only this module reads: nothing of it reaches our own terminal. Its
directory must lie below one of the session's roots once symlinks are resolved (default:
the session's ``cwd``). A ``command`` without ``args`` that is not a program on ``PATH``
is a shell line (``agents send "ls -la"``), so it runs with ``/bin/sh -c``.

Output is kept bounded: the last ``outputByteLimit`` bytes, never more than
:data:`OUTPUT_CAP`, cut from the start at a UTF-8 character boundary (``truncated``). The
same bytes reach the v2 client as the display terminal of the same id
(``terminal_update`` with the command, ``terminal_output_chunk`` per read, a snapshot
when the client's copy would pass twice the cap, and ``exitStatus`` at the end), which is
what the lifted ``{type: "terminal", terminalId}`` tool call content points at.

Every terminal's process group is stopped (:func:`acp2.transport.procgroup.stop_group`)
on ``terminal/kill`` and ``terminal/release``, on ``session/cancel`` of its session (killed,
still readable), on ``session/close`` and when the connection ends (:meth:`aclose`). A
session holds at most :data:`MAX_TERMINALS` unreleased terminals: at the limit the oldest
exited one is released for the agent, and if none has exited the create is refused
(:class:`TooManyTerminals`). An unknown terminal id answers ``-32602``.
"""

from __future__ import annotations

import base64
import codecs
import logging
import os
import secrets
import shlex
import shutil
import signal
import subprocess
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Final

import anyio
from anyio.abc import Process, TaskGroup

import acp2.compat.v1.schema as v1
import acp2.schema as v2
from acp2.errors import InvalidParams, InvalidRequest, ResourceNotFound
from acp2.transport.procgroup import stop_group

__all__ = [
    "MAX_TERMINALS",
    "OUTPUT_CAP",
    "CommandRefused",
    "TerminalService",
    "TooManyTerminals",
    "confined_cwd",
]

log = logging.getLogger("acp2.bridge")

#: Unreleased terminals one session may hold.
MAX_TERMINALS: Final = 16
#: The most output bytes kept per terminal, whatever ``outputByteLimit`` asks.
OUTPUT_CAP: Final = 1024 * 1024
#: Seconds to read what is left in the pipe after the command exited.
DRAIN_WAIT: Final = 0.5
_READ_SIZE: Final = 65_536
# Stopping a command: SIGTERM, then SIGKILL after this many seconds.
_TERM_GRACE: Final = 2.0

#: Asks the user (the client's permission policy) a v2 permission request; True: allowed.
Ask = Callable[[v2.RequestPermissionRequest], Awaitable[bool]]
#: Sends v2 session updates for a session to the v2 client.
Emit = Callable[[str, list[Any]], None]


class CommandRefused(InvalidRequest):
    """The user (the client's permission policy) refused a ``terminal/create``."""

    default_message = "The user refused to let the agent run this command"


class TooManyTerminals(InvalidRequest):
    """A session already holds :data:`MAX_TERMINALS` running terminals."""

    default_message = "Too many terminals: release one first"


def confined_cwd(roots: Sequence[str], cwd: str) -> str:
    """``cwd`` with symlinks resolved, if it is an existing directory at or below one of
    ``roots`` (also resolved); ``InvalidParams`` otherwise."""
    if not os.path.isabs(cwd):
        raise InvalidParams(f"the cwd must be absolute: {cwd!r}")
    real = os.path.realpath(cwd)
    for root in roots:
        base = os.path.realpath(root)
        if real == base or real.startswith(base.rstrip(os.sep) + os.sep):
            if not os.path.isdir(real):
                raise InvalidParams(f"the cwd is not a directory: {cwd!r}")
            return real
    raise InvalidParams(f"the cwd is outside the session's directories: {cwd!r}")


class _Output:
    """The bytes kept of one terminal's output: the last ``limit``, cut at a character."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.data = bytearray()
        self.truncated = False

    def add(self, chunk: bytes) -> None:
        self.data += chunk
        cut = len(self.data) - self.limit
        if cut <= 0:
            return
        # Never start inside a UTF-8 sequence: skip its continuation bytes too.
        while cut < len(self.data) and self.data[cut] & 0xC0 == 0x80:
            cut += 1
        del self.data[:cut]
        self.truncated = True

    def text(self, final: bool) -> str:
        # A running command may have written half a character: keep it back until exit.
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        return decoder.decode(bytes(self.data), final)


def _exit_status(code: int) -> tuple[int | None, str | None]:
    if code >= 0:
        return code, None
    try:
        return None, signal.Signals(-code).name
    except ValueError:
        return None, f"SIG{-code}"


class _Terminal:
    """One terminal: its process, its output and how it ended."""

    def __init__(self, terminal_id: str, session_id: str, process: Process, limit: int) -> None:
        self.id = terminal_id
        self.session_id = session_id
        self.process = process
        self.output = _Output(limit)
        self.exited = anyio.Event()
        self.status: tuple[int | None, str | None] = (None, None)
        self.forwarded = 0  # bytes the v2 client holds since its last snapshot

    def exit_status(self) -> v1.TerminalExitStatus | None:
        if not self.exited.is_set():
            return None
        code, sig = self.status
        return v1.TerminalExitStatus(exit_code=code, signal=sig)

    async def stop(self) -> None:
        await stop_group(self.process, grace=0, term_grace=_TERM_GRACE)


def _argv(request: v1.CreateTerminalRequest) -> tuple[list[str], str]:
    """The argv to execute and the command line to show for ``request``."""
    args = request.args if isinstance(request.args, list) else []
    if not args and shutil.which(request.command) is None:
        return ["/bin/sh", "-c", request.command], request.command
    argv = [request.command, *args]
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


def _b64(data: bytes | bytearray) -> str:
    return base64.b64encode(data).decode("ascii")


class TerminalService:
    """``terminal/*`` for the sessions of one bridge (see the module).

    ``roots(session_id)`` gives a session's directories (None: unknown session), ``ask``
    asks before each command, ``emit`` sends the v2 display terminal's updates; the
    pumps run in ``task_group``. :meth:`aclose` stops every terminal."""

    def __init__(
        self,
        roots: Callable[[str], Sequence[str] | None],
        ask: Ask,
        emit: Emit,
        task_group: TaskGroup,
        *,
        max_terminals: int = MAX_TERMINALS,
    ) -> None:
        self._roots = roots
        self._ask = ask
        self._emit = emit
        self._tg = task_group
        self._max = max_terminals
        self._terminals: dict[str, _Terminal] = {}

    # -- the v1 handlers -------------------------------------------------------------------

    async def create(self, request: v1.CreateTerminalRequest) -> v1.CreateTerminalResponse:
        """``terminal/create``: confine the cwd, ask, start; the new terminal's id."""
        roots = self._session_roots(request.session_id)
        cwd = roots[0] if not isinstance(request.cwd, str) else request.cwd
        cwd = confined_cwd(roots, cwd)
        argv, shown = _argv(request)
        self._make_room(request.session_id)
        terminal_id = f"term-{secrets.token_hex(6)}"
        if not await self._ask(_permission(request.session_id, terminal_id, shown, cwd)):
            raise CommandRefused()
        self._make_room(request.session_id)  # others may have been created meanwhile
        terminal = await self._start(request, terminal_id, argv, cwd)
        self._show(
            terminal.session_id,
            [v2.TerminalUpdate(terminal_id=terminal_id, command=shown, cwd=cwd)],
        )
        return v1.CreateTerminalResponse(terminal_id=terminal_id)

    async def output(self, request: v1.TerminalOutputRequest) -> v1.TerminalOutputResponse:
        """``terminal/output``: the output kept so far, ``truncated``, the exit status
        once the command exited."""
        terminal = self._find(request.session_id, request.terminal_id)
        done = terminal.exited.is_set()
        return v1.TerminalOutputResponse(
            output=terminal.output.text(final=done),
            truncated=terminal.output.truncated,
            exit_status=terminal.exit_status(),
        )

    async def wait_for_exit(
        self, request: v1.WaitForTerminalExitRequest
    ) -> v1.WaitForTerminalExitResponse:
        """``terminal/wait_for_exit``: answered once the command exited."""
        terminal = self._find(request.session_id, request.terminal_id)
        await terminal.exited.wait()
        code, sig = terminal.status
        return v1.WaitForTerminalExitResponse(exit_code=code, signal=sig)

    async def kill(self, request: v1.KillTerminalRequest) -> v1.KillTerminalResponse:
        """``terminal/kill``: stop the command's process group; the terminal stays."""
        await self._find(request.session_id, request.terminal_id).stop()
        return v1.KillTerminalResponse()

    async def release(self, request: v1.ReleaseTerminalRequest) -> v1.ReleaseTerminalResponse:
        """``terminal/release``: stop the command if it still runs and forget the id."""
        terminal = self._find(request.session_id, request.terminal_id)
        del self._terminals[terminal.id]
        await terminal.stop()
        return v1.ReleaseTerminalResponse()

    # -- the session's and the connection's end --------------------------------------------

    async def kill_session(self, session_id: str) -> None:
        """Stop every command of ``session_id`` (``session/cancel``); ids stay valid."""
        await self._stop_all([t for t in self._terminals.values() if t.session_id == session_id])

    async def release_session(self, session_id: str) -> None:
        """Stop and forget every terminal of ``session_id`` (``session/close``)."""
        mine = [t for t in self._terminals.values() if t.session_id == session_id]
        for terminal in mine:
            del self._terminals[terminal.id]
        await self._stop_all(mine)

    async def aclose(self) -> None:
        """Stop and forget every terminal (the connection ended); shielded, bounded."""
        every = list(self._terminals.values())
        self._terminals.clear()
        with anyio.CancelScope(shield=True):
            await self._stop_all(every)

    # -- internals -------------------------------------------------------------------------

    def _show(self, session_id: str, updates: list[Any]) -> None:
        # A closed session's last terminal updates would only linger in the client.
        if self._roots(session_id) is not None:
            self._emit(session_id, updates)

    async def _stop_all(self, terminals: list[_Terminal]) -> None:
        # In parallel: each may take the whole SIGTERM grace.
        async with anyio.create_task_group() as tg:
            for terminal in terminals:
                tg.start_soon(terminal.stop)

    def _session_roots(self, session_id: str) -> Sequence[str]:
        found = self._roots(session_id)
        if found is None:
            raise ResourceNotFound(f"unknown session {session_id}", {"sessionId": session_id})
        return found

    def _find(self, session_id: str, terminal_id: str) -> _Terminal:
        found = self._terminals.get(terminal_id)
        if found is None or found.session_id != session_id:
            raise InvalidParams(
                f"unknown terminal {terminal_id!r} (never created, or released)",
                {"terminalId": terminal_id},
            )
        return found

    def _make_room(self, session_id: str) -> None:
        mine = [t for t in self._terminals.values() if t.session_id == session_id]
        if len(mine) < self._max:
            return
        ended = next((t for t in mine if t.exited.is_set()), None)
        if ended is None:
            raise TooManyTerminals(
                f"the session already has {self._max} running terminals: release one first",
                {"limit": self._max},
            )
        # The agent forgot to release it: its process is gone, so only memory is freed.
        log.info("released exited terminal %s to make room (limit %d)", ended.id, self._max)
        del self._terminals[ended.id]
        self._tg.start_soon(ended.stop)  # reaps helpers it may have left in its group

    async def _start(
        self, request: v1.CreateTerminalRequest, terminal_id: str, argv: list[str], cwd: str
    ) -> _Terminal:
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
        terminal = _Terminal(terminal_id, request.session_id, process, _limit(request))
        self._terminals[terminal_id] = terminal
        self._tg.start_soon(self._run, terminal)
        return terminal

    async def _run(self, terminal: _Terminal) -> None:
        drained = anyio.Event()
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._pump, terminal, drained)
            code = await terminal.process.wait()
            with anyio.move_on_after(DRAIN_WAIT):
                await drained.wait()  # output written before the exit is in the pipe
            terminal.status = _exit_status(code)
            terminal.exited.set()
            exit_code, sig = terminal.status
            status = v2.TerminalExitStatus(exit_code=exit_code, signal=sig)
            self._show(
                terminal.session_id,
                [v2.TerminalUpdate(terminal_id=terminal.id, exit_status=status)],
            )

    async def _pump(self, terminal: _Terminal, drained: anyio.Event) -> None:
        stdout = terminal.process.stdout
        assert stdout is not None
        try:
            while True:
                try:
                    chunk = await stdout.receive(_READ_SIZE)
                except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
                    return
                terminal.output.add(chunk)
                self._forward(terminal, chunk)
        finally:
            drained.set()
            await stdout.aclose()

    def _forward(self, terminal: _Terminal, chunk: bytes) -> None:
        terminal.forwarded += len(chunk)
        update: Any
        if terminal.forwarded > 2 * OUTPUT_CAP:
            # The client would keep everything: replace its copy by the bytes we keep.
            kept = terminal.output.data
            terminal.forwarded = len(kept)
            update = v2.TerminalUpdate(
                terminal_id=terminal.id, output=v2.TerminalOutput(data=_b64(kept))
            )
        else:
            update = v2.TerminalOutputChunk(terminal_id=terminal.id, data=_b64(chunk))
        self._show(terminal.session_id, [update])


def _permission(
    session_id: str, terminal_id: str, command: str, cwd: str
) -> v2.RequestPermissionRequest:
    return v2.RequestPermissionRequest(
        session_id=session_id,
        title=f"Run {command}",
        description="The agent asks to run this command in a terminal.",
        subject=v2.CommandPermissionSubject(command=command, cwd=cwd, terminal_id=terminal_id),
        options=[
            v2.PermissionOption(option_id="allow", name="Allow", kind="allow_once"),
            v2.PermissionOption(option_id="reject", name="Reject", kind="reject_once"),
        ],
    )

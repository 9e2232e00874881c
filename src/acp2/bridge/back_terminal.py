"""The v1 ``terminal/*`` requests a v1 agent sends its client, served by the back bridge.

Each ``terminal/create`` is asked first (``ask``: a v2 permission request with a
``command`` subject naming the command, its directory and the new terminal's id); only an
``allow`` runs it. The command runs as a real subprocess leading its own process group
(``start_new_session``), with stdin from ``/dev/null`` and stdout and stderr merged into
one pipe that only the bridge reads: nothing of it reaches our own terminal
(:mod:`acp2.bridge.back_terminal_run`, one terminal). Its directory must lie below one of
the session's roots once symlinks are resolved (default: the session's ``cwd``). A
``command`` without ``args`` that holds shell syntax (agents send ``"ls -la"``) runs with
``/bin/sh -c``.

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

import logging
import os
import secrets
from collections.abc import Awaitable, Callable, Sequence
from functools import partial
from typing import Any, Final

import anyio
from anyio.abc import TaskGroup

import acp2.compat.v1.schema as v1
import acp2.schema as v2
from acp2.bridge.back_terminal_run import OUTPUT_CAP, RunningTerminal, command_line
from acp2.errors import (
    CommandRefused,
    InvalidParams,
    ResourceNotFound,
    TooManyTerminals,
)

__all__ = [
    "MAX_TERMINALS",
    "OUTPUT_CAP",  # re-exported: the cap is part of what this service promises
    "CommandRefused",
    "TerminalService",
    "TooManyTerminals",
    "confined_cwd",
]

log = logging.getLogger("acp2.bridge")

#: Unreleased terminals one session may hold.
MAX_TERMINALS: Final = 16

#: Asks the user (the client's permission policy) a v2 permission request; True: allowed.
Ask = Callable[[v2.RequestPermissionRequest], Awaitable[bool]]
#: Sends v2 session updates for a session to the v2 client.
Emit = Callable[[str, list[Any]], None]


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
        self._terminals: dict[str, RunningTerminal] = {}

    # -- the v1 handlers -------------------------------------------------------------------

    async def create(self, request: v1.CreateTerminalRequest) -> v1.CreateTerminalResponse:
        """``terminal/create``: confine the cwd, ask, start; the new terminal's id."""
        roots = self._session_roots(request.session_id)
        cwd = roots[0] if not isinstance(request.cwd, str) else request.cwd
        cwd = confined_cwd(roots, cwd)
        argv, shown = command_line(request, cwd)
        self._make_room(request.session_id)
        terminal_id = f"term-{secrets.token_hex(6)}"
        if not await self._ask(_permission(request.session_id, terminal_id, shown, cwd)):
            raise CommandRefused()
        self._make_room(request.session_id)  # others may have been created meanwhile
        show = partial(self._show, request.session_id)
        terminal = await RunningTerminal.start(request, terminal_id, argv, cwd, show)
        self._terminals[terminal_id] = terminal
        show([v2.TerminalUpdate(terminal_id=terminal_id, command=shown, cwd=cwd)])
        self._tg.start_soon(terminal.run)
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

    async def _stop_all(self, terminals: list[RunningTerminal]) -> None:
        # In parallel: each may take the whole SIGTERM grace.
        async with anyio.create_task_group() as tg:
            for terminal in terminals:
                tg.start_soon(terminal.stop)

    def _session_roots(self, session_id: str) -> Sequence[str]:
        found = self._roots(session_id)
        if found is None:
            raise ResourceNotFound(f"unknown session {session_id}", {"sessionId": session_id})
        return found

    def _find(self, session_id: str, terminal_id: str) -> RunningTerminal:
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

"""Terminal login (AU-05, AU-06): run the agent's own login in the user's terminal.

An agent may offer ``{"type": "terminal"}`` auth methods, but only to a client that sent
``capabilities.auth.terminal`` (AU-05: :func:`terminal_login_capabilities`). Such a method
is never sent as ``auth/login`` (AU-04): the client starts a *separate* process of the same
agent program, with the method's ``args`` appended and its ``env`` applied over the usual
environment, hands it the terminal, and waits. Exit status 0 is success; anything else (a
non-zero status, a signal, Ctrl-C) is failure. After a success the client reconnects,
initializes again and retries what needed the login (``acp2 chat`` does this).

The ``args`` and ``env`` come from the agent, so they are checked before anything runs:
at most :data:`MAX_ARGS` arguments, no NUL byte anywhere, variable names that are names
(letters, digits, ``_``; unique within the method, AU-06). The user sees the exact command
(sanitized) and confirms it first -- that part is the front-end's.
"""

from __future__ import annotations

import os
import re
import signal
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, Final

import anyio

from acp2.errors import LocalProtocolError
from acp2.schema.auth import AuthMethodTerminal
from acp2.schema.capabilities import (
    AuthCapabilities,
    ClientCapabilities,
    TerminalAuthCapabilities,
)

__all__ = [
    "MAX_ARGS",
    "login_argv",
    "login_env",
    "run_terminal_login",
    "terminal_login_capabilities",
    "terminal_methods",
]

#: The most arguments a terminal auth method may append.
MAX_ARGS: Final = 64
_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def terminal_login_capabilities(base: ClientCapabilities | None = None) -> ClientCapabilities:
    """``base`` (default ``{}``) with ``auth.terminal`` set: this client can run a
    terminal login, so the agent may advertise terminal methods (AU-05)."""
    import msgspec

    caps = base if base is not None else ClientCapabilities()
    auth = caps.auth if isinstance(caps.auth, AuthCapabilities) else AuthCapabilities()
    return msgspec.structs.replace(
        caps, auth=msgspec.structs.replace(auth, terminal=TerminalAuthCapabilities())
    )


def terminal_methods(methods: Sequence[Any]) -> list[AuthMethodTerminal]:
    """The terminal auth methods among an agent's ``authMethods``, in its order."""
    return [m for m in methods if isinstance(m, AuthMethodTerminal)]


def login_argv(agent_command: Sequence[str], method: AuthMethodTerminal) -> list[str]:
    """The login command: the agent's own argv with the method's ``args`` appended.

    Raises :class:`LocalProtocolError` for more than :data:`MAX_ARGS` arguments or a NUL.
    """
    args = list(method.args) if isinstance(method.args, list) else []
    if len(args) > MAX_ARGS:
        raise LocalProtocolError(f"the terminal login asks for {len(args)} arguments")
    if any("\0" in arg for arg in args):
        raise LocalProtocolError("a terminal login argument contains a NUL byte")
    return [*agent_command, *args]


def login_env(base: Mapping[str, str], method: AuthMethodTerminal) -> dict[str, str]:
    """``base`` with the method's variables applied over it (same names overridden).

    Raises :class:`LocalProtocolError` for a name that is not a name, a name given twice
    (AU-06), or a NUL in a value.
    """
    env = dict(base)
    seen: set[str] = set()
    for var in method.env if isinstance(method.env, list) else []:
        if not _NAME.match(var.name):
            raise LocalProtocolError(f"bad environment variable name {var.name!r}")
        if var.name in seen:
            raise LocalProtocolError(f"the variable {var.name} is given twice (AU-06)")
        if "\0" in var.value:
            raise LocalProtocolError(f"the value of {var.name} contains a NUL byte")
        seen.add(var.name)
        env[var.name] = var.value
    return env


async def run_terminal_login(
    agent_command: Sequence[str],
    method: AuthMethodTerminal,
    *,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
) -> bool:
    """Run ``method``'s login in this process's terminal and wait; True on exit status 0.

    The child inherits stdin, stdout and stderr (it needs the terminal) and this process's
    group, so Ctrl-C reaches it; meanwhile SIGINT does nothing here, and the login's
    end -- whatever its status -- gives the terminal back. ``env`` is the base environment
    (default: ours). Raises :class:`LocalProtocolError` when the method's ``args`` / ``env``
    are refused (see :func:`login_argv`, :func:`login_env`), ``OSError`` when the program
    cannot start. A cancelled wait kills the login and re-raises.
    """
    argv = login_argv(agent_command, method)
    environment = login_env(os.environ if env is None else env, method)
    with _sigint_ignored():
        process = await anyio.open_process(
            argv, stdin=None, stdout=None, stderr=None, cwd=cwd, env=environment
        )
        try:
            status = await process.wait()
        except BaseException:
            process.kill()
            with anyio.CancelScope(shield=True):
                await process.wait()
            raise
    return status == 0


def _ignore(signum: int, frame: object) -> None:
    return None


@contextmanager
def _sigint_ignored() -> Iterator[None]:
    """Make SIGINT do nothing here (main thread only) so Ctrl-C ends the login, not the
    client. A handler, not ``SIG_IGN``: an ignored signal stays ignored across ``exec``,
    and the login must still get Ctrl-C."""
    try:
        previous = signal.signal(signal.SIGINT, _ignore)
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)

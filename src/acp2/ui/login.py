"""Logging in when the agent refuses a session with ``-32000`` (AU-06 for ``acp2 chat``).

:func:`offer_login` lists the agent's auth methods (names sanitized), asks which one to
use and runs it: an ``agent`` method in the protocol (``auth/login``, then the session is
asked for again on the same connection), a ``terminal`` method by running the agent's
own login command in this terminal after showing it (:mod:`acp2.client.terminal_login`;
after a success the chat reconnects). Only on a terminal: a transcript chat gets a
message saying how to log in instead.
"""

from __future__ import annotations

import shlex
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Literal

from acp2.client import ClientConnection
from acp2.client.terminal_login import login_argv, run_terminal_login
from acp2.errors import LocalProtocolError
from acp2.sanitize import line
from acp2.schema.auth import AuthMethodAgent, AuthMethodTerminal
from acp2.ui.choose import picked

__all__ = ["Ask", "LoginOutcome", "describe_methods", "offer_login"]

#: ``retry``: logged in on this connection; ``reconnect``: logged in by a terminal login,
#: start the agent again; ``declined``: no login (none offered, refused, or failed).
LoginOutcome = Literal["retry", "reconnect", "declined"]
#: Shows a question, returns the answer typed (``""`` at end of input).
Ask = Callable[[str], Awaitable[str]]
Method = AuthMethodAgent | AuthMethodTerminal


def usable(methods: Sequence[Any]) -> list[Method]:
    """The methods this chat can run, in the agent's order (unknown types are left out)."""
    return [m for m in methods if isinstance(m, AuthMethodAgent | AuthMethodTerminal)]


def describe_methods(methods: Sequence[Method], agent_command: Sequence[str]) -> list[str]:
    """One numbered, sanitized line per method; a terminal method shows its command."""
    lines = []
    for number, method in enumerate(methods, 1):
        text = f"{number}. {method.name}"
        if isinstance(method.description, str) and method.description:
            text += f" -- {method.description}"
        if isinstance(method, AuthMethodTerminal):
            text += f" (runs: {shlex.join(login_argv(agent_command, method))})"
        lines.append(line(text))
    return lines


async def offer_login(
    client: ClientConnection,
    agent_command: Sequence[str],
    *,
    ask: Ask,
    note: Callable[[str], None],
    cwd: str | None = None,
) -> LoginOutcome:
    """Ask the user to log in with one of ``client.auth_methods`` and do it."""
    methods = usable(client.auth_methods)
    if not methods:
        return "declined"
    note("the agent needs you to log in:")
    try:
        lines = describe_methods(methods, agent_command)
    except LocalProtocolError as exc:  # a terminal method whose args were refused
        note(line(f"cannot offer the agent's login: {exc}"))
        return "declined"
    for text in lines:
        note(text)
    answer = (await ask(f"log in with [1-{len(methods)}, Enter: quit]: ")).strip()
    index = picked(answer, len(methods))
    if index is None:
        return "declined"
    method = methods[index]
    if isinstance(method, AuthMethodAgent):
        await client.login(method.method_id)
        return "retry"
    note(line(f"running the agent's login: {shlex.join(login_argv(agent_command, method))}"))
    if await run_terminal_login(agent_command, method, cwd=cwd):
        note("logged in; starting the agent again")
        return "reconnect"
    note("the login did not succeed (it exited with an error)")
    return "declined"

"""``acp2 serve`` start-up checks that fail before anything listens, in one line each.

A missing agent command or a port already taken used to surface late and raw (a
FileNotFoundError in the server log once a client connected; uvicorn's ``[Errno 98]``);
these helpers find both up front and word them as ``acp2 serve: ...`` with the fix.
"""

from __future__ import annotations

import errno
import ipaddress
import os
import shutil
import socket

__all__ = ["agent_command_problem", "bind_listener", "wildcard_note"]


def agent_command_problem(command: list[str]) -> str | None:
    """None when ``command[0]`` names an executable (a path to an executable file, or a
    name found on PATH); else the one line saying which command and how to fix it."""
    program = command[0]
    if os.sep in program or (os.altsep is not None and os.altsep in program):
        if os.path.isfile(program) and os.access(program, os.X_OK):
            return None
        return f"agent command not found or not executable: {program!r} (check the path)"
    if shutil.which(program) is not None:
        return None
    return (
        f"agent command not found: {program!r} "
        "(install it, put it on PATH, or give its full path after --)"
    )


def bind_listener(host: str, port: int) -> socket.socket:
    """A TCP socket bound to ``host:port`` (not yet listening), for uvicorn's
    ``sockets=``; ValueError whose text is the clean line when it cannot be bound."""
    where = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
    except socket.gaierror as exc:
        raise ValueError(f"cannot listen on {where}: {exc.strerror}") from None
    sock = socket.socket(family, kind, proto)
    # As uvicorn does: a restarted server may rebind while old connections sit in TIME_WAIT.
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
    except OSError as exc:
        sock.close()
        raise ValueError(f"cannot listen on {where}: {_bind_reason(exc)}") from None
    return sock


def _bind_reason(exc: OSError) -> str:
    if exc.errno == errno.EADDRINUSE:
        return "address already in use (choose another --port, or --port 0 for a free one)"
    if exc.errno == errno.EACCES:
        return "permission denied (ports below 1024 need privileges: choose another --port)"
    if exc.errno == errno.EADDRNOTAVAIL:
        return "no such address on this machine (check --host)"
    return (exc.strerror or str(exc)).lower()


def wildcard_note(host: str) -> str | None:
    """For a wildcard ``--host`` (0.0.0.0, ::) the note that clients replace it with one
    of this machine's addresses; None for any other host."""
    try:
        if not ipaddress.ip_address(host).is_unspecified:
            return None
    except ValueError:
        return None
    return (
        f"note: {host} means every address of this machine: "
        f"clients use one of its addresses (or its name) in place of {host}"
    )

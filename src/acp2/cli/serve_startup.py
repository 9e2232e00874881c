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
from typing import Any

__all__ = ["agent_command_problem", "bind_listeners", "wildcard_note"]


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


def bind_listeners(host: str, port: int) -> list[socket.socket]:
    """TCP sockets bound (not yet listening) to every address ``host`` resolves to, all
    on one port (the first one's when ``port`` is 0), for uvicorn's ``sockets=``: as
    uvicorn itself binds, so ``localhost`` is still both 127.0.0.1 and ::1. ValueError
    whose text is the clean line when any cannot be bound (none is left open)."""
    where = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise ValueError(f"cannot listen on {where}: {exc.strerror}") from None
    bound: list[socket.socket] = []
    try:
        for family, kind, proto, _, address in dict.fromkeys(found):
            if bound:  # --port 0: the one free port the first bind got, everywhere
                address = (address[0], bound[0].getsockname()[1], *address[2:])
            bound.append(_bound(family, kind, proto, address))
    except OSError as exc:
        for sock in bound:
            sock.close()
        raise ValueError(f"cannot listen on {where}: {_bind_reason(exc)}") from None
    return bound


def _bound(family: int, kind: int, proto: int, address: Any) -> socket.socket:
    sock = socket.socket(family, kind, proto)
    try:
        # As uvicorn does: a restarted server may rebind while old connections sit in
        # TIME_WAIT; v6 sockets take v6 only, so a v4 address of the same host binds too.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        sock.bind(address)
    except OSError:
        sock.close()
        raise
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

"""Validation of session-management params: roots, MCP servers, replay cursors, list
cursors (SS-05, SS-09, SS-15, SS-19). Each check raises ``InvalidParams`` (-32602)."""

from __future__ import annotations

import base64
import binascii
import json
import os
from typing import TYPE_CHECKING, Any

from msgspec import UNSET, Raw

from acp2.errors import InvalidParams
from acp2.schema import (
    McpServerAcp,
    McpServerHttp,
    McpServerSse,
    McpServerStdio,
    ReplayFromStart,
)

if TYPE_CHECKING:
    from acp2.agent.settings import AgentSettings as Agent

__all__ = [
    "check_directory",
    "check_mcp",
    "check_replay",
    "check_roots",
    "decode_cursor",
    "encode_cursor",
    "same_dir",
]


def check_roots(agent: Agent, cwd: str, additional: Any) -> list[str]:
    """Return the additional directories; ``cwd`` and each of them must be an absolute
    path of an existing directory without a NUL character, and extra roots need the
    ``additionalDirectories`` capability (SS-05, SS-06)."""
    check_directory(cwd, "cwd")
    dirs = list(additional) if isinstance(additional, list) else []
    if dirs and not agent.additional_directories:
        raise InvalidParams("This agent does not support additionalDirectories")
    for entry in dirs:
        if not isinstance(entry, str):
            raise InvalidParams("additionalDirectories entries must be absolute paths")
        check_directory(entry, "additionalDirectories entry")
    return dirs


def check_directory(path: str, what: str) -> None:
    """Raise -32602 unless ``path`` is an absolute path (TR-17, SS-05) of an existing
    directory, without a NUL character (which no OS path can hold)."""
    if "\0" in path:
        raise InvalidParams(f"{what} must not contain a NUL character")
    if not os.path.isabs(path):
        raise InvalidParams(
            f"{what} must be an absolute path"
            if what == "cwd"
            else "additionalDirectories entries must be absolute paths"
        )
    try:
        is_dir = os.path.isdir(path)
    except (OSError, ValueError):
        is_dir = False
    if not is_dir:
        raise InvalidParams(f"{what} is not an existing directory: {path!r}")


def check_mcp(agent: Agent, given: Any) -> list[Any]:
    """Return the MCP servers; a transport the agent did not advertise, or a relative
    stdio command, is rejected (SS-09, Nov: MUST)."""
    servers: list[Any] = list(given) if isinstance(given, list) else []
    for server in servers:
        if not _takes(agent, server):
            raise InvalidParams("Unsupported MCP server transport")
        if isinstance(server, McpServerStdio) and not os.path.isabs(server.command):
            raise InvalidParams("An MCP stdio command must be an absolute path")
    return servers


def _takes(agent: Agent, server: Any) -> bool:
    """Whether ``agent`` advertises the transport of ``server``."""
    return (
        (isinstance(server, McpServerStdio) and agent.mcp_stdio)
        or (isinstance(server, McpServerHttp) and agent.mcp_http)
        or (isinstance(server, McpServerAcp) and agent.mcp_acp)
        or (isinstance(server, McpServerSse) and agent.mcp_sse)
    )


def check_replay(replay_from: Any) -> bool:
    """True to replay from the start; omitted / null means no replay; anything else is
    rejected rather than guessed (SS-15)."""
    if replay_from is UNSET or replay_from is None:
        return False
    if isinstance(replay_from, ReplayFromStart):
        return True
    if isinstance(replay_from, Raw):
        raise InvalidParams("Unknown replayFrom cursor type")
    raise InvalidParams("Invalid replayFrom")


def same_dir(a: str, b: str) -> bool:
    """True when two absolute paths name the same directory (``/p`` and ``/p/``)."""
    return os.path.normpath(a) == os.path.normpath(b)


def encode_cursor(updated_at: str, session_id: str) -> str:
    """The opaque ``session/list`` cursor after the session ``(updated_at, session_id)``."""
    return base64.urlsafe_b64encode(json.dumps([updated_at, session_id]).encode()).decode()


def decode_cursor(cursor: str) -> tuple[str, str]:
    """The ``(updated_at, session_id)`` key of a cursor made by :func:`encode_cursor`."""
    try:
        value = json.loads(base64.urlsafe_b64decode(cursor.encode()))
        if isinstance(value, list) and len(value) == 2 and all(isinstance(v, str) for v in value):
            return value[0], value[1]
    except (binascii.Error, ValueError, UnicodeDecodeError):
        pass
    raise InvalidParams("Invalid cursor")

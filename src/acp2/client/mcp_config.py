"""MCP servers a client passes to every agent: from ``--mcp`` flags and editor config files.

Two sources, one result (a list of :class:`~acp2.schema.McpServerStdio` /
:class:`~acp2.schema.McpServerHttp`):

- :func:`parse_mcp_flag` reads ``NAME=URL`` (``http://`` / ``https://``: a Streamable HTTP
  server) or ``NAME=COMMAND ARGS...`` (a stdio server; the command is looked up on
  ``PATH`` when it is not absolute, and the rest is split like a shell would).
- :func:`load_mcp_config` reads the ``{"mcpServers": {NAME: {...}}}`` file editors use
  (Claude Desktop's and Zed's shape; Zed's ``context_servers`` key too): ``command`` /
  ``args`` / ``env`` for stdio, ``url`` / ``headers`` (``type`` ``http`` or
  ``streamable-http``) for HTTP. Every string may use ``${NAME}``, replaced by that
  environment variable when the file is read, so secrets stay out of the file, the shell
  history and acp2's logs (a message about a value names the variable, never its value).

:func:`usable_mcp_servers` keeps the servers the agent advertised it can take
(``session.mcp``) and says, one line each, why the others are left out.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from acp2.client.checks import _get, session_capabilities, transport_of
from acp2.errors import LocalProtocolError, McpConfigError
from acp2.schema import (
    AgentCapabilities,
    EnvVariable,
    HttpHeader,
    McpServerHttp,
    McpServerStdio,
    supports,
)

__all__ = ["load_mcp_config", "parse_mcp_flag", "usable_mcp_servers"]

_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_HTTP_TYPES = ("http", "streamable-http", "streamableHttp")
Which = Callable[[str], str | None]


def parse_mcp_flag(value: str, *, which: Which = shutil.which) -> Any:
    """One ``--mcp`` value as a server; raise :class:`~acp2.errors.McpConfigError`."""
    name, sep, rest = value.partition("=")
    if not sep or not name.strip() or not rest.strip():
        raise McpConfigError(f"--mcp wants NAME=COMMAND or NAME=URL, got {value!r}")
    if rest.startswith(("http://", "https://")):
        return McpServerHttp(name=name, url=rest)
    try:
        argv = shlex.split(rest)
    except ValueError as exc:
        raise McpConfigError(f"--mcp {name}: {exc}") from None
    return McpServerStdio(name=name, command=_absolute(name, argv[0], which), args=argv[1:])


def load_mcp_config(
    path: str | os.PathLike[str],
    env: Mapping[str, str] | None = None,
    *,
    which: Which = shutil.which,
) -> list[Any]:
    """The servers of an editor-style config file, ``${NAME}`` expanded from ``env``
    (default: the environment); raise :class:`~acp2.errors.McpConfigError`."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise McpConfigError(f"cannot read the MCP config {str(path)!r}: {exc}") from None
    table = data.get("mcpServers", data.get("context_servers")) if isinstance(data, dict) else None
    if not isinstance(table, dict):
        raise McpConfigError(f'{str(path)!r} has no "mcpServers" object')
    source = os.environ if env is None else env
    return [_server(str(n), e, source, which) for n, e in table.items()]


def _server(name: str, entry: Any, env: Mapping[str, str], which: Which) -> Any:
    if not isinstance(entry, dict):
        raise McpConfigError(f"MCP server {name!r}: its entry must be an object")
    if "url" in entry:
        kind = entry.get("type", "http")
        if kind not in _HTTP_TYPES:
            raise McpConfigError(f"MCP server {name!r}: transport {kind!r} is not in ACP v2")
        headers = [
            HttpHeader(name=k, value=_expand(v, name, env))
            for k, v in _pairs(entry, "headers", name)
        ]
        return McpServerHttp(name=name, url=_expand(entry["url"], name, env), headers=headers)
    if "command" not in entry:
        raise McpConfigError(f'MCP server {name!r} needs a "command" or a "url"')
    args = entry.get("args", [])
    if not isinstance(args, list):
        raise McpConfigError(f'MCP server {name!r}: "args" must be a list of strings')
    command = _absolute(name, _expand(entry["command"], name, env), which)
    variables = [
        EnvVariable(name=k, value=_expand(v, name, env)) for k, v in _pairs(entry, "env", name)
    ]
    return McpServerStdio(
        name=name, command=command, args=[_expand(a, name, env) for a in args], env=variables
    )


def _pairs(entry: dict[str, Any], key: str, name: str) -> list[tuple[str, Any]]:
    table = entry.get(key, {})
    if not isinstance(table, dict):
        raise McpConfigError(f"MCP server {name!r}: {key!r} must be an object of strings")
    return [(str(k), v) for k, v in table.items()]


def _expand(value: Any, name: str, env: Mapping[str, str]) -> str:
    if not isinstance(value, str):
        raise McpConfigError(f"MCP server {name!r}: every value must be a string")

    def variable(match: re.Match[str]) -> str:
        found = env.get(match.group(1))
        if found is None:
            raise McpConfigError(
                f"MCP server {name!r} uses ${{{match.group(1)}}}, which is not set"
            )
        return found

    return _VARIABLE.sub(variable, value)


def _absolute(name: str, command: str, which: Which) -> str:
    """ACP wants an absolute command: look it up on this machine's PATH if need be."""
    if os.path.isabs(command):
        return command
    found = which(command)
    if found is None:
        raise McpConfigError(f"MCP server {name!r}: {command!r} is not on PATH")
    return os.path.abspath(found)


def usable_mcp_servers(
    caps: AgentCapabilities, servers: Sequence[Any]
) -> tuple[list[Any], list[str]]:
    """The servers whose transport the agent advertises, and one warning per other one."""
    try:
        mcp = _get(session_capabilities(caps), "mcp")
    except LocalProtocolError:
        mcp = None
    kept: list[Any] = []
    warnings: list[str] = []
    for server in servers:
        kind = transport_of(server)
        if supports(_get(mcp, kind)):
            kept.append(server)
        else:
            warnings.append(
                f"MCP server {server.name!r} not sent: the agent takes no {kind} MCP servers"
            )
    return kept, warnings

"""``--mcp`` and ``--mcp-config`` (``acp2 run``, ``acp2 chat``, ``acp2 check``): MCP servers
to pass to the agent (:mod:`acp2.client.mcp_config` reads them)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

__all__ = ["add_mcp_options", "mcp_servers_of", "send_mcp_servers"]


def add_mcp_options(parser: argparse.ArgumentParser) -> None:
    """Add the repeatable ``--mcp NAME=COMMAND...`` / ``--mcp NAME=URL`` and ``--mcp-config``."""
    parser.add_argument(
        "--mcp",
        action="append",
        default=[],
        metavar="NAME=COMMAND|URL",
        help="an MCP server for the agent: NAME='COMMAND ARGS' (stdio) or NAME=http(s)://... "
        "(Streamable HTTP); repeatable",
    )
    parser.add_argument(
        "--mcp-config",
        action="append",
        default=[],
        metavar="FILE",
        help='MCP servers from a JSON file {"mcpServers": {...}} as editors use; '
        "${VAR} in it is read from the environment (keep secrets there)",
    )


def mcp_servers_of(args: argparse.Namespace) -> list[Any]:
    """The servers the flags name, files first; raise McpConfigError (a usage error)."""
    from acp2.client.mcp_config import load_mcp_config, parse_mcp_flag

    servers: list[Any] = []
    for path in getattr(args, "mcp_config", None) or []:
        servers.extend(load_mcp_config(path))
    servers.extend(parse_mcp_flag(value) for value in getattr(args, "mcp", None) or [])
    return servers


def send_mcp_servers(client: Any, servers: list[Any], program: str) -> None:
    """Give ``client`` the servers for its sessions; warn (stderr) about those it cannot send."""
    from acp2 import sanitize

    for warning in client.use_mcp_servers(servers) if servers else []:
        print(f"{program}: warning: {sanitize.line(warning)}", file=sys.stderr)

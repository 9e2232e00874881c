"""How an agent connects the MCP servers of its sessions: time limits and the stdio launcher."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["McpOptions", "StdioLaunch"]


@dataclass(frozen=True)
class StdioLaunch:
    """One stdio server's process: ``command`` and ``args``, the ``env`` the client gave
    (added to the SDK's minimal inherited environment), the working directory ``cwd`` and
    the session's ``roots`` (a launcher may confine the server to them)."""

    command: str
    args: tuple[str, ...]
    env: dict[str, str] = field(default_factory=dict, repr=False)
    cwd: str = "/"
    roots: tuple[str, ...] = ()


#: Rewrites a stdio launch, e.g. to run it inside a sandbox; identity by default.
Launcher = Callable[[StdioLaunch], StdioLaunch]


@dataclass(frozen=True)
class McpOptions:
    """Limits for the MCP servers of one agent.

    ``connect_timeout``: seconds a server has to start, initialize and list its tools.
    ``call_timeout``: seconds one tool call may take before it is cancelled (MCP's own
    cancellation) and reported as failed. ``max_tools``: tools kept per server.
    ``stderr_tail``: bytes of a stdio server's stderr kept (the rest is read and dropped)
    for the message that says why it failed. ``launcher``: rewrites each stdio launch
    (the coding agent puts servers in its command sandbox this way). ``max_line``: bytes
    of one line a stdio server may write; a longer one stops the server (see
    :mod:`acp2.agent.mcp.linecap`; None: no relay, no limit).
    """

    connect_timeout: float = 30.0
    call_timeout: float = 300.0
    max_tools: int = 200
    stderr_tail: int = 4096
    launcher: Launcher | None = None
    max_line: int | None = 64 << 20

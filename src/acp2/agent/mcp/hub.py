"""The MCP servers of one session (``turn.mcp``): started as the session opens, stopped
when it closes or its connection ends."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from acp2.agent.mcp.options import McpOptions
from acp2.agent.mcp.server import McpServerClient, ServerConfig

if TYPE_CHECKING:
    from acp2.agent.mcp.over_acp import AcpMcpLink

__all__ = ["SessionMcp"]


class SessionMcp:
    """The session's MCP servers, in the order the client gave them.

    ``spawn`` starts a coroutine function in a task that lives as long as the session's
    connection (the runtime passes its task group's ``start_soon``). Nothing is imported
    from the MCP SDK, and nothing starts, unless the session has servers.
    """

    # Every session has one, most with no servers: slots and the shared default options
    # keep that to about a hundred bytes (measured: the sessions bench's heap per session).
    __slots__ = ("_clients", "_roots", "_spawn", "acp", "configs", "options")

    def __init__(
        self,
        configs: list[Any],
        roots: list[str],
        spawn: Callable[..., object] | None,
        options: McpOptions | None = None,
    ) -> None:
        self.configs = _known(configs)
        self._roots = roots
        self._spawn = spawn
        #: The limits and stdio launcher used by the next :meth:`start`.
        self.options = options or _DEFAULT_OPTIONS
        #: What carries ``acp`` servers to the client (the runtime sets it on a
        #: connection that offers MCP over ACP); without it they fail with a reason.
        self.acp: AcpMcpLink | None = None
        self._clients: list[McpServerClient] | None = None

    def start(self) -> None:
        """Begin connecting every server (idempotent; no-op without servers). Without the
        ``mcp`` SDK, or without a task group, every server fails at once with a reason."""
        if self._clients is not None or not self.configs:
            return
        self._clients = [
            McpServerClient(c, self._roots, self.options, self.acp) for c in self.configs
        ]
        problem = _missing_sdk() or (None if self._spawn else "this session has no task group")
        for client in self._clients:
            if problem is not None:
                client.fail(problem)
            else:
                assert self._spawn is not None
                self._spawn(client.keep)

    async def servers(self) -> list[McpServerClient]:
        """Every server once it is connected or has failed (each waits at most its
        ``connect_timeout``); check each one's ``error``. Starts them if needed."""
        self.start()
        for client in self._clients or []:
            await client.wait_ready()
        return list(self._clients or [])

    def stop(self) -> None:
        """Stop every server (idempotent); a later :meth:`start` starts them afresh."""
        for client in self._clients or []:
            client.stop()
        self._clients = None

    def replace(self, configs: list[Any], roots: list[str]) -> None:
        """A resume gave new servers (or roots): stop the old ones, start these. The same
        servers and roots again change nothing (the running ones stay connected)."""
        wanted = _known(configs)
        if wanted == self.configs and roots == self._roots and self._clients is not None:
            return
        self.stop()
        self.configs = wanted
        self._roots = roots
        self.start()


def _known(configs: list[Any]) -> list[ServerConfig]:
    """The servers of a transport acp2 knows (the runtime refused the others already)."""
    return [c for c in configs if isinstance(c, ServerConfig)]


#: The options of every session that is given none (immutable, so shared).
_DEFAULT_OPTIONS: McpOptions = McpOptions()


def _missing_sdk() -> str | None:
    try:
        import mcp  # noqa: F401
    except ImportError:
        return "the agent lacks the MCP Python SDK (acp2's mcp extra, e.g. .[mcp])"
    _quiet_sdk_logs()
    return None


def _quiet_sdk_logs() -> None:
    """The SDK logs each garbage line and failure of a server at WARNING or above. That is
    the server's doing, told to the user once through ``error``; with nothing configured,
    Python would print every one on the agent's stderr. An application that configured
    logging (a handler on the root or on ``mcp``) keeps its choice."""
    sdk = logging.getLogger("mcp")
    if not sdk.handlers and not logging.getLogger().handlers:
        sdk.addHandler(logging.NullHandler())

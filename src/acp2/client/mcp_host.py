"""MCP over ACP on the client's side: MCP servers that live in the client's own process.

A client gives its agent a tool without a process or a port: it hands an MCP server object
built with the official SDK (``MCPServer``, the SDK's FastMCP, or a low-level ``Server``)
where a server configuration goes (``new_session(mcp_servers=[server])``,
``use_mcp_servers``). :class:`McpHost` names it ``{type:"acp", name, serverId}`` -- sent
only to an agent advertising ``session.mcp.acp`` -- and when the agent connects
(``mcp/connect``) runs the SDK's server session over that connection's ``mcp/message``
traffic (:class:`~acp2.transport.mcp_channel.McpChannel`) until the agent disconnects or
the ACP connection ends. The agent is not trusted: it reaches only the servers this
client offered, at most :data:`MAX_CONNECTIONS` connections at a time.
"""

from __future__ import annotations

import logging
import secrets
from typing import TYPE_CHECKING, Any, Final

import anyio
import msgspec

from acp2.errors import InvalidParams, InvalidRequest
from acp2.schema.mcp import McpServerAcp
from acp2.schema.mcp_acp import (
    ConnectMcpRequest,
    ConnectMcpResponse,
    DisconnectMcpRequest,
    DisconnectMcpResponse,
    McpMessage,
)
from acp2.schema.methods import MCP_MESSAGE, MCP_MESSAGE_NOTIFICATION
from acp2.transport.mcp_channel import McpChannel

if TYPE_CHECKING:
    from anyio.abc import TaskGroup

    from acp2.rpc.link import Link

__all__ = ["MAX_CONNECTIONS", "McpHost", "is_mcp_server"]

log = logging.getLogger("acp2.client.mcp")

#: MCP-over-ACP connections one agent may hold open at once.
MAX_CONNECTIONS: Final = 64


def is_mcp_server(value: object) -> bool:
    """Whether ``value`` is a server object of the MCP SDK (hosted, not a configuration)."""
    return callable(getattr(_lowlevel(value), "create_initialization_options", None))


def _lowlevel(server: Any) -> Any:
    # MCPServer wraps the low-level Server it runs; the SDK's own in-memory transport
    # reaches it the same way (there is no public accessor).
    return getattr(server, "_lowlevel_server", server)


class McpHost:
    """The in-process MCP servers a client offers its agent on one ACP connection."""

    def __init__(self, link: Link, task_group: TaskGroup) -> None:
        self._link = link
        self._tg = task_group
        self._offered: dict[int, tuple[Any, McpServerAcp]] = {}  # id(object) -> config
        self._servers: dict[str, Any] = {}  # server id -> low-level server
        self._open: dict[str, tuple[McpChannel, anyio.CancelScope]] = {}
        self._watching = False

    def offer(self, server: Any, name: str | None = None) -> McpServerAcp:
        """The configuration naming ``server`` (an MCP SDK server object), which this
        client serves from now on; the same object always gets the same configuration.
        ``name`` defaults to the server's own name."""
        known = self._offered.get(id(server))
        if known is not None and known[0] is server:
            return known[1]
        server_id = f"acp2-{secrets.token_hex(8)}"
        config = McpServerAcp(name=name or _name_of(server), server_id=server_id)
        self._offered[id(server)] = (server, config)
        self._servers[server_id] = _lowlevel(server)
        return config

    def configs(self, servers: list[Any]) -> list[Any]:
        """``servers`` with each MCP SDK server object replaced by its configuration."""
        return [self.offer(s) if is_mcp_server(s) else s for s in servers]

    # -- the agent's requests ---------------------------------------------------------

    async def answer_connect(self, params: ConnectMcpRequest) -> ConnectMcpResponse:
        """Open a connection to an offered server (``-32602`` for any other id) and start
        serving it."""
        server = self._servers.get(params.server_id)
        if server is None:
            raise InvalidParams(f"no MCP server {params.server_id!r} is offered")
        if len(self._open) >= MAX_CONNECTIONS:
            raise InvalidRequest(f"at most {MAX_CONNECTIONS} MCP connections at a time")
        connection_id = f"mcp-{secrets.token_hex(8)}"
        channel = McpChannel(connection_id, self._request, self._notify)
        scope = anyio.CancelScope()
        self._open[connection_id] = (channel, scope)
        self._tg.start_soon(self._serve, server, channel, scope)
        if not self._watching:
            self._watching = True
            self._tg.start_soon(self._close_at_end)
        return ConnectMcpResponse(connection_id=connection_id)

    async def answer_message(self, params: McpMessage) -> msgspec.Raw:
        """Answer an ``mcp/message`` request with the server's result (``-32602`` for an
        unknown connection)."""
        return await self._channel(params.connection_id).deliver_request(params)

    async def take_notification(self, params: McpMessage) -> None:
        """Pass an ``mcp/message`` notification to its server (dropped when unknown)."""
        entry = self._open.get(params.connection_id)
        if entry is not None:
            await entry[0].deliver_notification(params)

    async def answer_disconnect(self, params: DisconnectMcpRequest) -> DisconnectMcpResponse:
        """Close a connection and stop its server session (``-32602`` when unknown)."""
        self._channel(params.connection_id)
        self._stop(params.connection_id)
        return DisconnectMcpResponse()

    # -- serving ----------------------------------------------------------------------

    async def _serve(self, server: Any, channel: McpChannel, scope: anyio.CancelScope) -> None:
        try:
            with scope:
                async with anyio.create_task_group() as tg:
                    tg.start_soon(channel.run)
                    read, write = channel.streams
                    await server.run(read, write, server.create_initialization_options())
                    tg.cancel_scope.cancel()
        except Exception:  # the server's own failure ends its connection only
            log.exception("the hosted MCP server failed")
        finally:
            self._stop(channel.connection_id)

    def _stop(self, connection_id: str) -> None:
        entry = self._open.pop(connection_id, None)
        if entry is not None:
            entry[0].close()
            entry[1].cancel()

    async def _close_at_end(self) -> None:
        """Stop every server session once the ACP connection has ended."""
        try:
            await self._link.wait_closed()
        finally:
            for connection_id in list(self._open):
                self._stop(connection_id)

    def _channel(self, connection_id: str) -> McpChannel:
        entry = self._open.get(connection_id)
        if entry is None:
            raise InvalidParams(f"no MCP connection {connection_id!r}")
        return entry[0]

    async def _request(self, message: McpMessage) -> msgspec.Raw:
        return await self._link.call(MCP_MESSAGE, message)

    async def _notify(self, message: McpMessage) -> None:
        await self._link.notify(MCP_MESSAGE_NOTIFICATION, message)


def _name_of(server: Any) -> str:
    name = getattr(server, "name", None)
    return name if isinstance(name, str) and name else "client"

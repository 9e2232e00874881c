"""MCP over ACP on the agent's side: the servers a client hosts in its own process.

An agent with ``mcp_acp`` advertises ``session.mcp.acp``; a client may then name a server
``{type:"acp", name, serverId}``. One :class:`AcpMcpLink` per ACP connection opens MCP
connections to such servers (``mcp/connect``, answered with a ``connectionId``), carries
their messages (``mcp/message``, both ways) and closes them (``mcp/disconnect``); the
MCP SDK's ``ClientSession`` runs over each one's stream pair
(:class:`~acp2.transport.mcp_channel.McpChannel`) exactly as over stdio or HTTP, so the
server joins the session's hub like any other.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import anyio
import msgspec

from acp2.errors import Acp2Error, InvalidParams
from acp2.rpc.link import Link
from acp2.schema.mcp_acp import ConnectMcpRequest, DisconnectMcpRequest, McpMessage
from acp2.schema.methods import (
    MCP_CONNECT,
    MCP_DISCONNECT,
    MCP_MESSAGE,
    MCP_MESSAGE_NOTIFICATION,
)
from acp2.transport.mcp_channel import McpChannel

__all__ = ["AcpMcpLink"]

#: Seconds a client gets to answer ``mcp/disconnect`` before the agent stops waiting.
_DISCONNECT_WAIT = 5.0


class AcpMcpLink:
    """The MCP-over-ACP connections of one ACP connection, by ``connectionId``."""

    __slots__ = ("_channels", "_link")

    def __init__(self, link: Link) -> None:
        self._link = link
        self._channels: dict[str, McpChannel] = {}

    @contextlib.asynccontextmanager
    async def open(self, server_id: str) -> AsyncIterator[tuple[Any, Any]]:
        """Connect to the client's server ``server_id``; yield the SDK's (read, write)
        streams while the connection lasts, then disconnect. Raises the client's
        :class:`~acp2.errors.RequestError` when it refuses the connection."""
        answer = await self._link.call(MCP_CONNECT, ConnectMcpRequest(server_id=server_id))
        connection_id = answer.connection_id
        if connection_id in self._channels:
            raise InvalidParams(f"the client reused MCP connection id {connection_id!r}")
        channel = McpChannel(connection_id, self._request, self._notify)
        self._channels[connection_id] = channel
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(channel.run)
                try:
                    yield channel.streams
                finally:
                    tg.cancel_scope.cancel()
        finally:
            channel.close()
            del self._channels[connection_id]
            await self._disconnect(connection_id)

    async def answer_message(self, params: McpMessage) -> msgspec.Raw:
        """Serve an ``mcp/message`` request from the client's server (``-32602`` for an
        unknown connection)."""
        return await self._channel(params).deliver_request(params)

    async def take_notification(self, params: McpMessage) -> None:
        """Take an ``mcp/message`` notification from the client's server (one for an
        unknown connection is dropped: notifications are never answered)."""
        channel = self._channels.get(params.connection_id)
        if channel is not None:
            await channel.deliver_notification(params)

    def _channel(self, params: McpMessage) -> McpChannel:
        channel = self._channels.get(params.connection_id)
        if channel is None:
            raise InvalidParams(f"no MCP connection {params.connection_id!r}")
        return channel

    async def _request(self, message: McpMessage) -> msgspec.Raw:
        return await self._link.call(MCP_MESSAGE, message)

    async def _notify(self, message: McpMessage) -> None:
        await self._link.notify(MCP_MESSAGE_NOTIFICATION, message)

    async def _disconnect(self, connection_id: str) -> None:
        """Tell the client the connection is over; a closed link or a slow or failing
        answer changes nothing here (the connection is gone on our side already)."""
        params = DisconnectMcpRequest(connection_id=connection_id)
        shielded = anyio.CancelScope(shield=True)
        with shielded, anyio.move_on_after(_DISCONNECT_WAIT), contextlib.suppress(Acp2Error):
            await self._link.call(MCP_DISCONNECT, params)

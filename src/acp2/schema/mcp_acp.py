"""MCP over ACP (unstable): the messages that carry an MCP session over the ACP connection.

Modelled from the Rust schema crate's v2 ``mcp.rs`` (feature ``unstable_mcp_over_acp``:
``ConnectMcpRequest``, ``MessageMcpRequest`` / ``MessageMcpNotification``,
``DisconnectMcpRequest``) and the RFD page ``rfds/mcp-over-acp``. No vendored schema has
them. A client names a server it hosts as ``{type:"acp", name, serverId}``
(:class:`~acp2.schema.McpServerAcp`); an agent advertising ``session.mcp.acp`` opens a
connection to it with ``mcp/connect`` (the client answers a fresh ``connectionId``), then
both sides exchange MCP messages as ``mcp/message`` requests and notifications, and the
agent ends it with ``mcp/disconnect``.
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

from acp2.schema._base import Model
from acp2.schema.common import MetaField

__all__ = [
    "ConnectMcpRequest",
    "ConnectMcpResponse",
    "DisconnectMcpRequest",
    "DisconnectMcpResponse",
    "McpMessage",
]


class ConnectMcpRequest(Model, gc=False, kw_only=True):
    """Params of ``mcp/connect`` (agent to client): open a connection to the server the
    client declared with ``server_id``."""

    server_id: str
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class ConnectMcpResponse(Model, gc=False, kw_only=True):
    """Result of ``mcp/connect``: the new connection's id, unique on the ACP connection."""

    connection_id: str
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class McpMessage(Model, gc=False, kw_only=True):
    """Params of ``mcp/message``, as a request or a notification, in either direction: one
    MCP message on ``connection_id``. ``mcp_method`` / ``mcp_params`` are the inner MCP
    message's ``method`` and ``params`` (flattened into these params; omitted or null
    params mean none). A request's result is the inner MCP result, unchanged; an inner MCP
    error is the outer error response."""

    connection_id: str
    mcp_method: str = msgspec.field(name="method")
    mcp_params: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="params")
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")

    def __post_init__(self) -> None:
        if self.mcp_params is None:  # null means none: never sent as null
            self.mcp_params = UNSET


class DisconnectMcpRequest(Model, gc=False, kw_only=True):
    """Params of ``mcp/disconnect`` (agent to client): close ``connection_id``."""

    connection_id: str
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class DisconnectMcpResponse(Model, gc=False, kw_only=True):
    """Result of ``mcp/disconnect`` (empty)."""

    meta: MetaField = msgspec.field(default=UNSET, name="_meta")

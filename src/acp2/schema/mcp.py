"""MCP server configurations a client passes to ``session/new`` / ``session/resume`` (SS-08).

``stdio`` and ``http`` are the spec's. ``acp`` (:class:`McpServerAcp`) is the unstable
MCP-over-ACP transport, modelled from the Rust schema crate's v2 ``McpServerAcp`` (feature
``unstable_mcp_over_acp``) and the RFD page ``rfds/mcp-over-acp``: valid only towards an
agent advertising ``session.mcp.acp``. ``sse`` (:class:`McpServerSse`) is v1's HTTP+SSE
transport, which v2 dropped (EX-11): acp2's agent still takes it when it advertises
``session.mcp.sse``, and nothing sends it to an agent that does not.
"""

from __future__ import annotations

from typing import TypeAlias

import msgspec
from msgspec import UNSET, Raw, UnsetType

from acp2.schema._base import Model
from acp2.schema.common import AbsolutePath, MetaField

__all__ = [
    "EnvVariable",
    "HttpHeader",
    "McpServer",
    "McpServerAcp",
    "McpServerHttp",
    "McpServerSse",
    "McpServerStdio",
]


class EnvVariable(Model, gc=False, kw_only=True):
    """An environment variable ``{name, value}`` for a process the agent starts."""

    name: str
    value: str
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class HttpHeader(Model, gc=False, kw_only=True):
    """An HTTP header ``{name, value}`` sent to an HTTP MCP server."""

    name: str
    value: str
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class McpServerStdio(Model, tag_field="type", tag="stdio", gc=False, kw_only=True):
    """MCP server ``{type:"stdio"}``: the agent runs ``command`` (absolute) with args and env.

    Omitted ``args`` / ``env`` mean ``[]``; Nov also allows ``null`` for that, which is
    read as omitted (and so never sent).
    """

    name: str
    command: AbsolutePath
    args: list[str] | UnsetType | None = UNSET
    env: list[EnvVariable] | UnsetType | None = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")

    def __post_init__(self) -> None:
        if self.args is None:
            self.args = UNSET
        if self.env is None:
            self.env = UNSET


class McpServerHttp(Model, tag_field="type", tag="http", gc=False, kw_only=True):
    """MCP server ``{type:"http"}``: the agent connects to ``url`` with ``headers``.

    Omitted ``headers`` means ``[]``; a Nov ``null`` is read as omitted.
    """

    name: str
    url: str
    headers: list[HttpHeader] | UnsetType | None = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")

    def __post_init__(self) -> None:
        if self.headers is None:
            self.headers = UNSET


class McpServerSse(Model, tag_field="type", tag="sse", gc=False, kw_only=True):
    """MCP server ``{type:"sse"}`` (v1's HTTP+SSE transport): the agent opens the event
    stream at ``url`` with ``headers``. Only for an agent advertising ``session.mcp.sse``
    (an acp2 extension; no v2 draft has it)."""

    name: str
    url: str
    headers: list[HttpHeader] | UnsetType | None = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")

    def __post_init__(self) -> None:
        if self.headers is None:
            self.headers = UNSET


class McpServerAcp(Model, tag_field="type", tag="acp", gc=False, kw_only=True):
    """MCP server ``{type:"acp"}`` (unstable, MCP over ACP): the server lives in the
    client's process; the agent reaches it through ``mcp/connect`` with ``server_id``,
    then ``mcp/message`` on the same ACP connection. ``server_id`` is chosen by the client
    and unique on the connection."""

    name: str
    server_id: str
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


#: An MCP server configuration; an unknown transport ``type`` is kept as ``msgspec.Raw``.
McpServer: TypeAlias = McpServerHttp | McpServerStdio | McpServerSse | McpServerAcp | Raw

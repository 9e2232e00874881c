"""MCP server configurations a client passes to ``session/new`` / ``session/resume`` (SS-08)."""

from __future__ import annotations

from typing import TypeAlias

import msgspec
from msgspec import UNSET, Raw, UnsetType

from acp2.schema._base import Model
from acp2.schema.common import AbsolutePath, MetaField

__all__ = ["EnvVariable", "HttpHeader", "McpServer", "McpServerHttp", "McpServerStdio"]


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


#: An MCP server configuration; an unknown transport ``type`` is kept as ``msgspec.Raw``.
McpServer: TypeAlias = McpServerHttp | McpServerStdio | Raw

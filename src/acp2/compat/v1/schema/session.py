"""v1 session methods: new, load, resume, list, close, delete, prompt, cancel, set_mode."""

from __future__ import annotations

from typing import Annotated

import msgspec
from msgspec import UNSET, UnsetType

from acp2.compat.v1.schema.common import (
    LENIENT,
    SKIP_INVALID,
    MetaField,
    Model,
    SessionId,
    SessionModeId,
)
from acp2.compat.v1.schema.config import SessionConfigOption
from acp2.compat.v1.schema.content import ContentBlock

__all__ = [
    "CancelNotification",
    "CloseSessionRequest",
    "CloseSessionResponse",
    "DeleteSessionRequest",
    "DeleteSessionResponse",
    "EnvVariable",
    "HttpHeader",
    "ListSessionsRequest",
    "ListSessionsResponse",
    "LoadSessionRequest",
    "LoadSessionResponse",
    "McpServer",
    "NewSessionRequest",
    "NewSessionResponse",
    "PromptRequest",
    "PromptResponse",
    "ResumeSessionRequest",
    "ResumeSessionResponse",
    "SessionInfo",
    "SessionMode",
    "SessionModeState",
    "SetSessionModeRequest",
    "SetSessionModeResponse",
]


class EnvVariable(Model, gc=False, kw_only=True):
    """An environment variable ``{name, value}`` (MCP stdio servers, terminals)."""

    name: str
    value: str
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class HttpHeader(Model, gc=False, kw_only=True):
    """An HTTP header ``{name, value}`` for an http / sse MCP server."""

    name: str
    value: str
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class SessionMode(Model, gc=False, kw_only=True):
    """A session mode the agent offers: ``id``, ``name``, optional description."""

    id: SessionModeId
    name: str
    description: Annotated[str | UnsetType | None, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class SessionModeState(Model, gc=False, kw_only=True):
    """The session's modes: ``currentModeId`` and ``availableModes``."""

    current_mode_id: SessionModeId
    available_modes: Annotated[list[SessionMode], SKIP_INVALID]
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class NewSessionRequest(Model, gc=False, kw_only=True):
    """Params of v1 ``session/new``."""

    cwd: str
    additional_directories: Annotated[list[str] | UnsetType, LENIENT, SKIP_INVALID] = UNSET
    mcp_servers: Annotated[list[McpServer], SKIP_INVALID]
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class NewSessionResponse(Model, gc=False, kw_only=True):
    """Result of v1 ``session/new``."""

    session_id: SessionId
    modes: Annotated[SessionModeState | UnsetType | None, LENIENT] = UNSET
    config_options: Annotated[
        list[SessionConfigOption] | UnsetType | None, LENIENT, SKIP_INVALID
    ] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class LoadSessionRequest(Model, gc=False, kw_only=True):
    """Params of v1 ``session/load``."""

    mcp_servers: Annotated[list[McpServer], SKIP_INVALID]
    cwd: str
    additional_directories: Annotated[list[str] | UnsetType, LENIENT, SKIP_INVALID] = UNSET
    session_id: SessionId
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class LoadSessionResponse(Model, gc=False, kw_only=True):
    """Result of v1 ``session/load``."""

    modes: Annotated[SessionModeState | UnsetType | None, LENIENT] = UNSET
    config_options: Annotated[
        list[SessionConfigOption] | UnsetType | None, LENIENT, SKIP_INVALID
    ] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class ResumeSessionRequest(Model, gc=False, kw_only=True):
    """Params of v1 ``session/resume``."""

    session_id: SessionId
    cwd: str
    additional_directories: Annotated[list[str] | UnsetType, LENIENT, SKIP_INVALID] = UNSET
    mcp_servers: Annotated[list[McpServer] | UnsetType, LENIENT, SKIP_INVALID] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class ResumeSessionResponse(Model, gc=False, kw_only=True):
    """Result of v1 ``session/resume``."""

    modes: Annotated[SessionModeState | UnsetType | None, LENIENT] = UNSET
    config_options: Annotated[
        list[SessionConfigOption] | UnsetType | None, LENIENT, SKIP_INVALID
    ] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class SessionInfo(Model, gc=False, kw_only=True):
    """A session in a ``session/list`` result: id, cwd, extra roots, title, update time."""

    session_id: SessionId
    cwd: str
    additional_directories: Annotated[list[str] | UnsetType, LENIENT, SKIP_INVALID] = UNSET
    title: Annotated[str | UnsetType | None, LENIENT] = UNSET
    updated_at: Annotated[str | UnsetType | None, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class ListSessionsRequest(Model, gc=False, kw_only=True):
    """Params of v1 ``session/list``."""

    cwd: str | UnsetType | None = UNSET
    cursor: str | UnsetType | None = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class ListSessionsResponse(Model, gc=False, kw_only=True):
    """Result of v1 ``session/list``."""

    sessions: Annotated[list[SessionInfo], SKIP_INVALID]
    next_cursor: Annotated[str | UnsetType | None, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class CloseSessionRequest(Model, gc=False, kw_only=True):
    """Params of v1 ``session/close``."""

    session_id: SessionId
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class CloseSessionResponse(Model, gc=False, kw_only=True):
    """Result of v1 ``session/close``."""

    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class DeleteSessionRequest(Model, gc=False, kw_only=True):
    """Params of v1 ``session/delete``."""

    session_id: SessionId
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class DeleteSessionResponse(Model, gc=False, kw_only=True):
    """Result of v1 ``session/delete``."""

    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class PromptRequest(Model, gc=False, kw_only=True):
    """Params of v1 ``session/prompt``."""

    session_id: SessionId
    prompt: list[ContentBlock]
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class PromptResponse(Model, gc=False, kw_only=True):
    """Result of v1 ``session/prompt``."""

    stop_reason: str
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class CancelNotification(Model, gc=False, kw_only=True):
    """Params of v1 ``session/cancel``."""

    session_id: SessionId
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class SetSessionModeRequest(Model, gc=False, kw_only=True):
    """Params of v1 ``session/set_mode``."""

    session_id: SessionId
    mode_id: SessionModeId
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class SetSessionModeResponse(Model, gc=False, kw_only=True):
    """Result of v1 ``session/set_mode``."""

    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class McpServer(Model, gc=False, kw_only=True):
    """An MCP server to connect: stdio (no ``type``), ``type:"http"`` or ``type:"sse"``.

    The schema's union of ``McpServerHttp`` / ``McpServerSse`` (tagged by ``type``) and
    ``McpServerStdio`` (untagged) merged into one struct, because msgspec cannot mix tagged
    and untagged variants. ``__post_init__`` checks the shape of each kind; any other
    ``type`` is rejected (the v1 schema has no open variant), so a list skips it.
    """

    name: str
    type: str | UnsetType = UNSET
    command: str | UnsetType = UNSET
    args: list[str] | UnsetType = UNSET
    env: list[EnvVariable] | UnsetType = UNSET
    url: str | UnsetType = UNSET
    headers: list[HttpHeader] | UnsetType = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")

    def __post_init__(self) -> None:
        if self.type is UNSET:
            if UNSET in (self.command, self.args, self.env):
                raise ValueError("a stdio MCP server needs `command`, `args` and `env`")
        elif self.type in ("http", "sse"):
            if self.url is UNSET or self.headers is UNSET:
                raise ValueError(f"an {self.type} MCP server needs `url` and `headers`")
        else:
            raise ValueError(f"unknown MCP server type {self.type!r}")

"""v1 capabilities: what a client (fs, terminal, ...) and an agent (loadSession, prompt,
MCP, session methods) can do. Every field is lenient and optional, as the schema marks.
"""

from __future__ import annotations

from typing import Annotated

import msgspec
from msgspec import UNSET, UnsetType

from acp2.compat.v1.schema.common import (
    LENIENT,
    MetaField,
    Model,
)

__all__ = [
    "AgentAuthCapabilities",
    "AgentCapabilities",
    "AuthCapabilities",
    "BooleanConfigOptionCapabilities",
    "ClientCapabilities",
    "ClientSessionCapabilities",
    "ElicitationCapabilities",
    "ElicitationFormCapabilities",
    "ElicitationUrlCapabilities",
    "FileSystemCapabilities",
    "LogoutCapabilities",
    "McpCapabilities",
    "PromptCapabilities",
    "SessionAdditionalDirectoriesCapabilities",
    "SessionCapabilities",
    "SessionCloseCapabilities",
    "SessionConfigOptionsCapabilities",
    "SessionDeleteCapabilities",
    "SessionListCapabilities",
    "SessionResumeCapabilities",
]


class FileSystemCapabilities(Model, gc=False, kw_only=True):
    """v1 ``FileSystemCapabilities``."""

    read_text_file: Annotated[bool | UnsetType, LENIENT] = UNSET
    write_text_file: Annotated[bool | UnsetType, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class AuthCapabilities(Model, gc=False, kw_only=True):
    """v1 ``AuthCapabilities``."""

    terminal: Annotated[bool | UnsetType, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class SessionConfigOptionsCapabilities(Model, gc=False, kw_only=True):
    """v1 ``SessionConfigOptionsCapabilities``."""

    boolean: Annotated[BooleanConfigOptionCapabilities | UnsetType | None, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class BooleanConfigOptionCapabilities(Model, gc=False, kw_only=True):
    """v1 ``BooleanConfigOptionCapabilities``."""

    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class ClientSessionCapabilities(Model, gc=False, kw_only=True):
    """v1 ``ClientSessionCapabilities``."""

    config_options: Annotated[SessionConfigOptionsCapabilities | UnsetType | None, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class ElicitationFormCapabilities(Model, gc=False, kw_only=True):
    """v1 ``ElicitationFormCapabilities``."""

    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class ElicitationUrlCapabilities(Model, gc=False, kw_only=True):
    """v1 ``ElicitationUrlCapabilities``."""

    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class ElicitationCapabilities(Model, gc=False, kw_only=True):
    """v1 ``ElicitationCapabilities``."""

    form: Annotated[ElicitationFormCapabilities | UnsetType | None, LENIENT] = UNSET
    url: Annotated[ElicitationUrlCapabilities | UnsetType | None, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class ClientCapabilities(Model, gc=False, kw_only=True):
    """v1 ``ClientCapabilities``."""

    auth: Annotated[AuthCapabilities | UnsetType, LENIENT] = UNSET
    elicitation: Annotated[ElicitationCapabilities | UnsetType | None, LENIENT] = UNSET
    fs: Annotated[FileSystemCapabilities | UnsetType, LENIENT] = UNSET
    session: Annotated[ClientSessionCapabilities | UnsetType | None, LENIENT] = UNSET
    terminal: Annotated[bool | UnsetType, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class PromptCapabilities(Model, gc=False, kw_only=True):
    """v1 ``PromptCapabilities``."""

    audio: Annotated[bool | UnsetType, LENIENT] = UNSET
    embedded_context: Annotated[bool | UnsetType, LENIENT] = UNSET
    image: Annotated[bool | UnsetType, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class McpCapabilities(Model, gc=False, kw_only=True):
    """v1 ``McpCapabilities``."""

    http: Annotated[bool | UnsetType, LENIENT] = UNSET
    sse: Annotated[bool | UnsetType, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class SessionAdditionalDirectoriesCapabilities(Model, gc=False, kw_only=True):
    """v1 ``SessionAdditionalDirectoriesCapabilities``."""

    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class SessionCloseCapabilities(Model, gc=False, kw_only=True):
    """v1 ``SessionCloseCapabilities``."""

    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class SessionDeleteCapabilities(Model, gc=False, kw_only=True):
    """v1 ``SessionDeleteCapabilities``."""

    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class SessionListCapabilities(Model, gc=False, kw_only=True):
    """v1 ``SessionListCapabilities``."""

    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class SessionResumeCapabilities(Model, gc=False, kw_only=True):
    """v1 ``SessionResumeCapabilities``."""

    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class SessionCapabilities(Model, gc=False, kw_only=True):
    """v1 ``SessionCapabilities``."""

    additional_directories: Annotated[
        SessionAdditionalDirectoriesCapabilities | UnsetType | None, LENIENT
    ] = UNSET
    close: Annotated[SessionCloseCapabilities | UnsetType | None, LENIENT] = UNSET
    delete: Annotated[SessionDeleteCapabilities | UnsetType | None, LENIENT] = UNSET
    list: Annotated[SessionListCapabilities | UnsetType | None, LENIENT] = UNSET
    resume: Annotated[SessionResumeCapabilities | UnsetType | None, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class LogoutCapabilities(Model, gc=False, kw_only=True):
    """v1 ``LogoutCapabilities``."""

    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class AgentAuthCapabilities(Model, gc=False, kw_only=True):
    """v1 ``AgentAuthCapabilities``."""

    logout: Annotated[LogoutCapabilities | UnsetType | None, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class AgentCapabilities(Model, gc=False, kw_only=True):
    """v1 ``AgentCapabilities``."""

    auth: Annotated[AgentAuthCapabilities | UnsetType, LENIENT] = UNSET
    load_session: Annotated[bool | UnsetType, LENIENT] = UNSET
    mcp_capabilities: Annotated[McpCapabilities | UnsetType, LENIENT] = UNSET
    prompt_capabilities: Annotated[PromptCapabilities | UnsetType, LENIENT] = UNSET
    session_capabilities: Annotated[SessionCapabilities | UnsetType, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")

"""v1 capabilities: what a client (fs, terminal, ...) and an agent (loadSession, prompt,
MCP, session methods) can do. Every field is lenient and optional, as the schema marks.
"""

from __future__ import annotations

from typing import Annotated, Any

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
    """Client fs capabilities: ``readTextFile`` / ``writeTextFile`` methods it serves."""

    read_text_file: Annotated[bool | UnsetType, LENIENT] = UNSET
    write_text_file: Annotated[bool | UnsetType, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class AuthCapabilities(Model, gc=False, kw_only=True):
    """Client auth capabilities: ``terminal`` when the client can run terminal auth methods."""

    terminal: Annotated[bool | UnsetType, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class SessionConfigOptionsCapabilities(Model, gc=False, kw_only=True):
    """Client config option capabilities: ``boolean`` options beyond selects."""

    boolean: Annotated[BooleanConfigOptionCapabilities | UnsetType | None, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class BooleanConfigOptionCapabilities(Model, gc=False, kw_only=True):
    """Client capability: it can show ``boolean`` config options."""

    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class ClientSessionCapabilities(Model, gc=False, kw_only=True):
    """Client session capabilities: which config option kinds it can show."""

    config_options: Annotated[SessionConfigOptionsCapabilities | UnsetType | None, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class ElicitationFormCapabilities(Model, gc=False, kw_only=True):
    """Client capability: it can show form elicitations."""

    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class ElicitationUrlCapabilities(Model, gc=False, kw_only=True):
    """Client capability: it can open URL elicitations."""

    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class ElicitationCapabilities(Model, gc=False, kw_only=True):
    """Client elicitation capabilities: ``form`` and / or ``url`` mode."""

    form: Annotated[ElicitationFormCapabilities | UnsetType | None, LENIENT] = UNSET
    url: Annotated[ElicitationUrlCapabilities | UnsetType | None, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class ClientCapabilities(Model, gc=False, kw_only=True):
    """What a v1 client supports: ``fs`` read/write, ``terminal``, session, auth,
    elicitation, and ``subagents`` (``{}``: the client opts in to child sessions, Preview
    subagents; ``protocol/v1/subagents``)."""

    fs: Annotated[FileSystemCapabilities | UnsetType, LENIENT] = UNSET
    terminal: Annotated[bool | UnsetType, LENIENT] = UNSET
    session: Annotated[ClientSessionCapabilities | UnsetType | None, LENIENT] = UNSET
    auth: Annotated[AuthCapabilities | UnsetType, LENIENT] = UNSET
    elicitation: Annotated[ElicitationCapabilities | UnsetType | None, LENIENT] = UNSET
    subagents: Annotated[dict[str, Any] | UnsetType | None, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class PromptCapabilities(Model, gc=False, kw_only=True):
    """Agent prompt capabilities: ``image``, ``audio`` and ``embeddedContext`` blocks."""

    image: Annotated[bool | UnsetType, LENIENT] = UNSET
    audio: Annotated[bool | UnsetType, LENIENT] = UNSET
    embedded_context: Annotated[bool | UnsetType, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class McpCapabilities(Model, gc=False, kw_only=True):
    """Agent MCP capabilities: ``http`` / ``sse`` servers it can connect to (stdio always)."""

    http: Annotated[bool | UnsetType, LENIENT] = UNSET
    sse: Annotated[bool | UnsetType, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class SessionAdditionalDirectoriesCapabilities(Model, gc=False, kw_only=True):
    """Agent capability: sessions accept ``additionalDirectories``."""

    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class SessionCloseCapabilities(Model, gc=False, kw_only=True):
    """Agent capability: it serves ``session/close``."""

    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class SessionDeleteCapabilities(Model, gc=False, kw_only=True):
    """Agent capability: it serves ``session/delete``."""

    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class SessionListCapabilities(Model, gc=False, kw_only=True):
    """Agent capability: it serves ``session/list``."""

    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class SessionResumeCapabilities(Model, gc=False, kw_only=True):
    """Agent capability: it serves ``session/resume``."""

    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class SessionCapabilities(Model, gc=False, kw_only=True):
    """Agent session capabilities: ``list``, ``resume``, ``close``, ``delete``, extra roots."""

    list: Annotated[SessionListCapabilities | UnsetType | None, LENIENT] = UNSET
    delete: Annotated[SessionDeleteCapabilities | UnsetType | None, LENIENT] = UNSET
    additional_directories: Annotated[
        SessionAdditionalDirectoriesCapabilities | UnsetType | None, LENIENT
    ] = UNSET
    resume: Annotated[SessionResumeCapabilities | UnsetType | None, LENIENT] = UNSET
    close: Annotated[SessionCloseCapabilities | UnsetType | None, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class LogoutCapabilities(Model, gc=False, kw_only=True):
    """Agent capability: it serves the ``logout`` method."""

    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class AgentAuthCapabilities(Model, gc=False, kw_only=True):
    """Agent auth capabilities: ``logout`` when the agent supports the ``logout`` method."""

    logout: Annotated[LogoutCapabilities | UnsetType | None, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class AgentCapabilities(Model, gc=False, kw_only=True):
    """What a v1 agent supports: ``loadSession``, prompt content, MCP, session methods, auth."""

    load_session: Annotated[bool | UnsetType, LENIENT] = UNSET
    prompt_capabilities: Annotated[PromptCapabilities | UnsetType, LENIENT] = UNSET
    mcp_capabilities: Annotated[McpCapabilities | UnsetType, LENIENT] = UNSET
    session_capabilities: Annotated[SessionCapabilities | UnsetType, LENIENT] = UNSET
    auth: Annotated[AgentAuthCapabilities | UnsetType, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")

"""Unstable session methods of the Preview: fork, archive / unarchive, set title (SS-*).

Modelled from the Rust schema crate's v2 request and response types (docs.rs
``agent-client-protocol-schema`` 1.15 to 1.22: ``ForkSessionRequest``,
``ArchiveSessionRequest``, ``UnarchiveSessionRequest``, the ``session/set_title`` pair) and
the RFD pages ``rfds/session-fork`` and ``rfds/session-set-title``. No vendored schema has
them. Each is valid only towards an agent advertising its capability (``session.fork``,
``session.archive``, ``session.title``); acp2 implements none of them and never sends
them by itself. ``session/status`` has a capability but no published shapes: not here.
"""

from __future__ import annotations

from typing import Annotated

import msgspec
from msgspec import UNSET, UnsetType

from acp2.schema._base import LENIENT, SKIP_INVALID, Model
from acp2.schema.common import AbsolutePath, MetaField, SessionId
from acp2.schema.config import SessionConfigOption
from acp2.schema.mcp import McpServer
from acp2.schema.session import SystemPrompt

__all__ = [
    "ArchiveSessionRequest",
    "ArchiveSessionResponse",
    "ForkSessionRequest",
    "ForkSessionResponse",
    "SetSessionTitleRequest",
    "SetSessionTitleResponse",
    "UnarchiveSessionRequest",
    "UnarchiveSessionResponse",
]


class ForkSessionRequest(Model, gc=False, kw_only=True):
    """Params of ``session/fork``: start a new session from the context of ``sessionId``,
    leaving that session's history as it was. ``additional_directories``, when given, is
    the new session's complete list of extra roots."""

    session_id: SessionId
    cwd: AbsolutePath
    additional_directories: Annotated[list[AbsolutePath] | UnsetType, LENIENT, SKIP_INVALID] = UNSET
    mcp_servers: Annotated[list[McpServer] | UnsetType, LENIENT, SKIP_INVALID] = UNSET
    system_prompt: Annotated[SystemPrompt | UnsetType, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class ForkSessionResponse(Model, gc=False, kw_only=True):
    """Result of ``session/fork``: the new, independent ``sessionId`` and its options."""

    session_id: SessionId
    config_options: Annotated[list[SessionConfigOption] | UnsetType, LENIENT, SKIP_INVALID] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class ArchiveSessionRequest(Model, gc=False, kw_only=True):
    """Params of ``session/archive``: hide the session from default ``session/list``
    results, keeping its id and history; an active one is closed first. Archiving twice
    succeeds; an unknown session gets ``-32002``."""

    session_id: SessionId
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class ArchiveSessionResponse(Model, gc=False, kw_only=True):
    """Result of ``session/archive``: ``{}``."""

    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class UnarchiveSessionRequest(Model, gc=False, kw_only=True):
    """Params of ``session/unarchive``: list the session by default again (it is not
    resumed). Unarchiving one that is not archived succeeds; an unknown one gets
    ``-32002``."""

    session_id: SessionId
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class UnarchiveSessionResponse(Model, gc=False, kw_only=True):
    """Result of ``session/unarchive``: ``{}``."""

    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class SetSessionTitleRequest(Model, gc=False, kw_only=True):
    """Params of ``session/set_title``: the title the user chose for ``sessionId``; the
    agent then stops replacing it with titles it generates."""

    session_id: SessionId
    title: str
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class SetSessionTitleResponse(Model, gc=False, kw_only=True):
    """Result of ``session/set_title``: the title the agent stored (it may normalise it)."""

    title: str
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")

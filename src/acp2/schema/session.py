"""Session methods: new, resume (with replay), list, close, delete, prompt, cancel (SS-*, PL-*)."""

from __future__ import annotations

from typing import Annotated, TypeAlias

import msgspec
from msgspec import UNSET, Raw, UnsetType

from acp2.schema._base import LENIENT, SKIP_INVALID, Model
from acp2.schema.commands import AvailableCommand
from acp2.schema.common import AbsolutePath, MessageId, MetaField, SessionId, SessionListCursor
from acp2.schema.config import SessionConfigOption
from acp2.schema.content import ContentBlock
from acp2.schema.mcp import McpServer

__all__ = [
    "CancelSessionNotification",
    "CloseSessionRequest",
    "CloseSessionResponse",
    "DeleteSessionRequest",
    "DeleteSessionResponse",
    "ListSessionsRequest",
    "ListSessionsResponse",
    "NewSessionRequest",
    "NewSessionResponse",
    "PromptRequest",
    "PromptResponse",
    "ReplayFrom",
    "ReplayFromStart",
    "ResumeSessionRequest",
    "ResumeSessionResponse",
    "SessionInfo",
    "SystemPrompt",
]

_Directories = Annotated[list[AbsolutePath] | UnsetType, LENIENT, SKIP_INVALID]
_McpServers = Annotated[list[McpServer] | UnsetType, LENIENT, SKIP_INVALID]
_ConfigOptions = Annotated[list[SessionConfigOption] | UnsetType, LENIENT, SKIP_INVALID]
_Commands = Annotated[list[AvailableCommand] | UnsetType, LENIENT, SKIP_INVALID]


class SystemPrompt(Model, gc=False, kw_only=True):
    """A client-provided system prompt (unstable): ``content`` blocks given to the model
    at system level, in ``mode`` ``append`` (added to the agent's own instructions) or
    ``override`` (replacing its default instructions), or a custom / future mode.

    Modelled from the RFD page ``rfds/client-system-prompt`` and the Rust schema crate's
    v2 ``SystemPrompt`` (docs.rs ``agent-client-protocol-schema``, feature
    ``unstable_session_system_prompt``). Send it only to an agent advertising
    ``session.systemPrompt`` (``override`` also needs ``session.systemPrompt.mode.override``),
    and again on each lifecycle request of the session, as with ``cwd``.
    """

    mode: str
    content: list[ContentBlock]
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


#: Lenient: an agent without the capability ignores what it cannot read.
_SystemPrompt = Annotated[SystemPrompt | UnsetType, LENIENT]


class NewSessionRequest(Model, gc=False, kw_only=True):
    """Params of ``session/new``: the working directory, extra roots and MCP servers, and
    (unstable) a :class:`SystemPrompt`, omitted unless set."""

    cwd: AbsolutePath
    additional_directories: _Directories = UNSET
    mcp_servers: _McpServers = UNSET
    system_prompt: _SystemPrompt = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class NewSessionResponse(Model, gc=False, kw_only=True):
    """Result of ``session/new``: the new ``sessionId``, config options, commands (Nov)."""

    session_id: SessionId
    config_options: _ConfigOptions = UNSET
    available_commands: _Commands = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class ReplayFromStart(Model, tag_field="type", tag="start", gc=False, kw_only=True):
    """Replay cursor ``{type:"start"}``: replay the whole retained conversation."""

    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


#: Where ``session/resume`` starts replaying; an unknown ``type`` is kept as ``msgspec.Raw``
#: (the agent then rejects it with -32602, SS-15).
ReplayFrom: TypeAlias = ReplayFromStart | Raw


class ResumeSessionRequest(Model, gc=False, kw_only=True):
    """Params of ``session/resume``: reattach to ``sessionId``, optionally replaying history.

    ``replay_from`` is deliberately strict (Aug marks it default-on-error, but both drafts
    say a bad cursor must be rejected rather than read as "no replay"; SS-15, D-17).
    """

    session_id: SessionId
    cwd: AbsolutePath
    additional_directories: _Directories = UNSET
    mcp_servers: _McpServers = UNSET
    replay_from: ReplayFrom | UnsetType | None = UNSET
    system_prompt: _SystemPrompt = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class ResumeSessionResponse(Model, gc=False, kw_only=True):
    """Result of ``session/resume``, sent after any replay: config options, commands (Nov)."""

    config_options: _ConfigOptions = UNSET
    available_commands: _Commands = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class ListSessionsRequest(Model, gc=False, kw_only=True):
    """Params of ``session/list``: optional ``cwd`` filter and pagination ``cursor``."""

    cwd: AbsolutePath | UnsetType | None = UNSET
    cursor: SessionListCursor | UnsetType | None = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class SessionInfo(Model, gc=False, kw_only=True):
    """One listed session: id, cwd, extra roots, title, last update time."""

    session_id: SessionId
    cwd: AbsolutePath
    additional_directories: _Directories = UNSET
    title: Annotated[str | UnsetType | None, LENIENT] = UNSET
    #: RFC 3339 date-time.
    updated_at: Annotated[str | UnsetType | None, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class ListSessionsResponse(Model, gc=False, kw_only=True):
    """Result of ``session/list``: a page of ``sessions`` and the ``nextCursor`` if any."""

    sessions: Annotated[list[SessionInfo], LENIENT, SKIP_INVALID]
    #: Absent or ``None`` ends pagination; ``""`` is a valid cursor (Nov).
    next_cursor: Annotated[SessionListCursor | UnsetType | None, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class CloseSessionRequest(Model, gc=False, kw_only=True):
    """Params of ``session/close``: cancel the session's work and free it."""

    session_id: SessionId
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class CloseSessionResponse(Model, gc=False, kw_only=True):
    """Result of ``session/close``: ``{}``."""

    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class DeleteSessionRequest(Model, gc=False, kw_only=True):
    """Params of ``session/delete``: forget a session (needs ``session.delete``)."""

    session_id: SessionId
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class DeleteSessionResponse(Model, gc=False, kw_only=True):
    """Result of ``session/delete``: ``{}``."""

    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class PromptRequest(Model, gc=False, kw_only=True):
    """Params of ``session/prompt``: the user message's content blocks.

    Nov requires at least one block; an empty list is accepted here (Aug allows it), and
    senders must not send one (PL-02).

    ``idempotency_key`` (wire ``idempotencyKey``) is the Preview's exactly-once key: the
    client sends the same key on every attempt of one prompt, and the agent inserts the
    user message at most once per key, answering a retry with the original ``messageId``
    (agentclientprotocol.com/rfds/v2/idempotency-keys). No vendored schema has it (not
    Aug, not the TypeScript SDK 2.4.0 one); it is modelled from that page. Sending it is
    valid under every draft: none forbids extra fields on ``PromptRequest``, and the page
    defines no capability for it. Omitted, the prompt behaves as before.
    """

    session_id: SessionId
    prompt: list[ContentBlock]
    idempotency_key: str | UnsetType = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class PromptResponse(Model, gc=False, kw_only=True):
    """Result of ``session/prompt``, sent on acceptance: ``{}`` (Aug) or ``{messageId}`` (Nov).

    Agents always send ``message_id`` (Nov requires it; Aug peers ignore it); clients
    accept it missing (D-09).
    """

    message_id: MessageId | UnsetType = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class CancelSessionNotification(Model, gc=False, kw_only=True):
    """Params of ``session/cancel``: stop the session's foreground work."""

    session_id: SessionId
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")

"""v1 ``session/update``: the ``SessionUpdate`` open union and its remaining kinds.

An unknown ``sessionUpdate`` kind decodes to ``msgspec.Raw`` and re-encodes unchanged.
"""

from __future__ import annotations

from typing import Annotated, Final, TypeAlias, get_args

import msgspec
from msgspec import UNSET, Raw, UnsetType

from acp2.compat.v1.schema.common import (
    LENIENT,
    SKIP_INVALID,
    MessageId,
    MetaField,
    Model,
    SessionId,
    SessionModeId,
    UInt,
)
from acp2.compat.v1.schema.config import SessionConfigOption
from acp2.compat.v1.schema.content import ContentBlock
from acp2.compat.v1.schema.tools import SessionToolCallUpdate, ToolCall

__all__ = [
    "SESSION_UPDATE_KINDS",
    "AgentMessageChunk",
    "AgentThoughtChunk",
    "AvailableCommand",
    "AvailableCommandInput",
    "AvailableCommandsUpdate",
    "ConfigOptionUpdate",
    "ContentChunk",
    "Cost",
    "CurrentModeUpdate",
    "Plan",
    "PlanEntry",
    "SessionInfoUpdate",
    "SessionNotification",
    "SessionUpdate",
    "UnstructuredCommandInput",
    "UsageUpdate",
    "UserMessageChunk",
]


class ContentChunk(Model, gc=False, kw_only=True):
    """Fields of a message / thought chunk: a content block and an optional ``messageId``."""

    content: ContentBlock
    message_id: Annotated[MessageId | UnsetType | None, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class PlanEntry(Model, gc=False, kw_only=True):
    """One plan entry: ``content``, ``priority`` and ``status``."""

    content: str
    priority: str
    status: str
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class Plan(Model, tag_field="sessionUpdate", tag="plan", gc=False, kw_only=True):
    """Session update ``plan``: the full list of plan entries (v1 always sends all of them)."""

    entries: Annotated[list[PlanEntry], SKIP_INVALID]
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class UnstructuredCommandInput(Model, gc=False, kw_only=True):
    """A command's free-text input, described by ``hint``."""

    hint: str
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class AvailableCommand(Model, gc=False, kw_only=True):
    """A slash command the agent offers: ``name``, ``description`` and an optional input hint."""

    name: str
    description: str
    input: Annotated[AvailableCommandInput | UnsetType | None, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class AvailableCommandsUpdate(
    Model, tag_field="sessionUpdate", tag="available_commands_update", gc=False, kw_only=True
):
    """Session update ``available_commands_update``: the full list of commands (replaces)."""

    available_commands: Annotated[list[AvailableCommand], SKIP_INVALID]
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class CurrentModeUpdate(
    Model, tag_field="sessionUpdate", tag="current_mode_update", gc=False, kw_only=True
):
    """Session update ``current_mode_update``: the session switched to ``currentModeId``."""

    current_mode_id: SessionModeId
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class ConfigOptionUpdate(
    Model, tag_field="sessionUpdate", tag="config_option_update", gc=False, kw_only=True
):
    """Session update ``config_option_update``: the full list of config options (replaces)."""

    config_options: Annotated[list[SessionConfigOption], SKIP_INVALID]
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class SessionInfoUpdate(
    Model, tag_field="sessionUpdate", tag="session_info_update", gc=False, kw_only=True
):
    """Session update ``session_info_update``: patch the title / update time."""

    title: Annotated[str | UnsetType | None, LENIENT] = UNSET
    updated_at: Annotated[str | UnsetType | None, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class Cost(Model, gc=False, kw_only=True):
    """Cumulative session cost: ``amount`` in ``currency``."""

    amount: float
    currency: str
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class UsageUpdate(Model, tag_field="sessionUpdate", tag="usage_update", gc=False, kw_only=True):
    """Session update ``usage_update``: context ``used`` of ``size`` tokens, optional cost."""

    used: UInt
    size: UInt
    cost: Annotated[Cost | UnsetType | None, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class SessionNotification(Model, gc=False, kw_only=True):
    """Params of v1 ``session/update``."""

    session_id: SessionId
    update: SessionUpdate
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class UserMessageChunk(
    ContentChunk, tag_field="sessionUpdate", tag="user_message_chunk", kw_only=True
):
    """Session update ``user_message_chunk``: a piece of the user's message (replay)."""


class AgentMessageChunk(
    ContentChunk, tag_field="sessionUpdate", tag="agent_message_chunk", kw_only=True
):
    """Session update ``agent_message_chunk``: a piece of the agent's reply."""


class AgentThoughtChunk(
    ContentChunk, tag_field="sessionUpdate", tag="agent_thought_chunk", kw_only=True
):
    """Session update ``agent_thought_chunk``: a piece of the agent's reasoning."""


#: A command's input spec (v1 knows only the unstructured ``{hint}`` kind).
AvailableCommandInput: TypeAlias = UnstructuredCommandInput

#: A v1 ``session/update`` payload; an unknown ``sessionUpdate`` is kept as ``msgspec.Raw``.
SessionUpdate: TypeAlias = (
    UserMessageChunk
    | AgentMessageChunk
    | AgentThoughtChunk
    | ToolCall
    | SessionToolCallUpdate
    | Plan
    | AvailableCommandsUpdate
    | CurrentModeUpdate
    | ConfigOptionUpdate
    | SessionInfoUpdate
    | UsageUpdate
    | Raw
)

#: Every v1 update kind, in schema order.
SESSION_UPDATE_KINDS: Final[tuple[str, ...]] = tuple(
    cls.__struct_config__.tag for cls in get_args(SessionUpdate) if cls is not Raw
)

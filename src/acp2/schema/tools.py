"""Tool calls: ``tool_call_update``, ``tool_call_content_chunk`` and their content (TC-*).

``ToolCallUpdate`` is the session update (tagged ``sessionUpdate:"tool_call_update"``).
Its fields without the tag are :class:`ToolCallFields`, which is what a permission
request's ``tool_call`` subject carries (the schema reuses the ``ToolCallUpdate`` object
there, where no ``sessionUpdate`` key belongs). A client applies either in the same way.

Every field but ``toolCallId`` is a patch field: ``UNSET`` = unchanged, ``None`` = clear,
a value = replace (TC-03, EX-09).
"""

from __future__ import annotations

from typing import Annotated, Any, TypeAlias

import msgspec
from msgspec import UNSET, Raw, UnsetType

from acp2.schema._base import LENIENT, SKIP_INVALID, Model
from acp2.schema.common import AbsolutePath, MetaField, SessionId, TerminalId, ToolCallId, UInt
from acp2.schema.content import ContentBlock
from acp2.schema.diff import Diff

__all__ = [
    "CancelToolCallRequest",
    "CancelToolCallResponse",
    "Content",
    "SessionReference",
    "Terminal",
    "ToolCallCancelCapabilities",
    "ToolCallCapabilities",
    "ToolCallContent",
    "ToolCallContentChunk",
    "ToolCallFields",
    "ToolCallLocation",
    "ToolCallUpdate",
]


class Content(Model, tag_field="type", tag="content", gc=False, kw_only=True):
    """Tool-call content ``{type:"content", content}``: one ordinary content block."""

    content: ContentBlock
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class Terminal(Model, tag_field="type", tag="terminal", gc=False, kw_only=True):
    """Tool-call content ``{type:"terminal", terminalId}``: where a display terminal appears."""

    terminal_id: TerminalId
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class SessionReference(Model, tag_field="type", tag="session", gc=False, kw_only=True):
    """Tool-call content ``{type:"session", sessionId}`` (Preview subagents): the call
    involves that session (it delegated to, messaged or waited on a child, say).

    Modelled from the Subagent Sessions RFD ("Operations reference sessions"), completed
    with the Preview ("announcements/subagents-stabilized": "a tool call can link to a
    session with ``session`` content"): no vendored schema has it (not the TS SDK 2.4.0
    one), so every draft sees their ``other`` fallback. A display anchor only: it creates,
    reparents, subscribes to or controls nothing, and names a session the client already
    knows (its own, or a child announced by ``subagent_update`` before the reference).
    """

    session_id: SessionId
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


#: One item of a tool call's content; an unknown ``type`` is kept as ``msgspec.Raw``.
ToolCallContent: TypeAlias = Content | Diff | Terminal | SessionReference | Raw


class ToolCallLocation(Model, gc=False, kw_only=True):
    """A file location a tool call touches: absolute ``path`` and optional 1-based ``line``."""

    path: AbsolutePath
    #: Aug allows ``0``, Nov requires ``>= 1``: ``0`` is accepted; treat it as "no line".
    line: Annotated[UInt | UnsetType | None, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class ToolCallCancelCapabilities(Model, gc=False, kw_only=True):
    """Marker (Nov): this tool call may be cancelled with ``tool_call/cancel``."""

    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class ToolCallCapabilities(Model, gc=False, kw_only=True):
    """What a client may do with one tool call (Nov); replaced whole on each update."""

    cancel: Annotated[ToolCallCancelCapabilities | UnsetType | None, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class ToolCallFields(Model, gc=False, kw_only=True):
    """The ``ToolCallUpdate`` object without its ``sessionUpdate`` tag (permission subjects)."""

    tool_call_id: ToolCallId
    title: Annotated[str | UnsetType | None, LENIENT] = UNSET
    #: A tool kind (see ``TOOL_KINDS``); ``None`` resets it to ``other``.
    kind: Annotated[str | UnsetType | None, LENIENT] = UNSET
    #: A tool call status (see ``TOOL_CALL_STATUSES``); ``None`` resets it to ``pending``.
    status: Annotated[str | UnsetType | None, LENIENT] = UNSET
    content: Annotated[list[ToolCallContent] | UnsetType | None, LENIENT, SKIP_INVALID] = UNSET
    locations: Annotated[list[ToolCallLocation] | UnsetType | None, LENIENT, SKIP_INVALID] = UNSET
    raw_input: Annotated[Any, LENIENT] = UNSET
    raw_output: Annotated[Any, LENIENT] = UNSET
    #: The programmatic tool name (Nov).
    name: Annotated[str | UnsetType | None, LENIENT] = UNSET
    #: Per-call capabilities (Nov), e.g. ``cancel``.
    capabilities: Annotated[ToolCallCapabilities | UnsetType | None, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class ToolCallUpdate(
    ToolCallFields, tag_field="sessionUpdate", tag="tool_call_update", kw_only=True
):
    """Session update ``tool_call_update``: create or patch the tool call ``toolCallId``."""


class ToolCallContentChunk(
    Model, tag_field="sessionUpdate", tag="tool_call_content_chunk", gc=False, kw_only=True
):
    """Session update ``tool_call_content_chunk``: append one content item to a tool call."""

    tool_call_id: ToolCallId
    content: ToolCallContent
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class CancelToolCallRequest(Model, gc=False, kw_only=True):
    """Params of ``tool_call/cancel`` (Nov): cancel one tool call that advertises ``cancel``."""

    session_id: SessionId
    tool_call_id: ToolCallId
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class CancelToolCallResponse(Model, gc=False, kw_only=True):
    """Result of ``tool_call/cancel`` (Nov): ``{}`` once the cancellation is accepted."""

    meta: MetaField = msgspec.field(default=UNSET, name="_meta")

"""v1 tool calls: ``tool_call`` creates, ``tool_call_update`` patches; content, diffs,
terminals, locations; and ``session/request_permission``.

Patch fields of :class:`ToolCallUpdate` keep the three states: ``UNSET`` (unchanged),
``None`` (cleared) and a value (replaced).
"""

from __future__ import annotations

from typing import Annotated, Any, TypeAlias

import msgspec
from msgspec import UNSET, Raw, UnsetType

from acp2.compat.v1.schema.common import (
    LENIENT,
    SKIP_INVALID,
    MetaField,
    Model,
    PermissionOptionId,
    SessionId,
    TerminalId,
    ToolCallId,
    UInt,
)
from acp2.compat.v1.schema.content import ContentBlock

__all__ = [
    "CancelledPermissionOutcome",
    "Content",
    "Diff",
    "PermissionOption",
    "RequestPermissionOutcome",
    "RequestPermissionRequest",
    "RequestPermissionResponse",
    "SelectedPermissionOutcome",
    "SessionToolCallUpdate",
    "Terminal",
    "ToolCall",
    "ToolCallContent",
    "ToolCallLocation",
    "ToolCallUpdate",
]


class ToolCallLocation(Model, gc=False, kw_only=True):
    """A file location a tool call touches: ``path`` and optional ``line``."""

    path: str
    line: Annotated[UInt | UnsetType | None, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class Content(Model, tag_field="type", tag="content", gc=False, kw_only=True):
    """Tool call content ``type:"content"``: a content block."""

    content: ContentBlock
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class Diff(Model, tag_field="type", tag="diff", gc=False, kw_only=True):
    """Tool call content ``type:"diff"``: a file's ``oldText`` (null if new) and ``newText``."""

    path: str
    old_text: Annotated[str | UnsetType | None, LENIENT] = UNSET
    new_text: str
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class Terminal(Model, tag_field="type", tag="terminal", gc=False, kw_only=True):
    """Tool call content ``type:"terminal"``: embed the client terminal ``terminalId``."""

    terminal_id: TerminalId
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class ToolCall(Model, tag_field="sessionUpdate", tag="tool_call", gc=False, kw_only=True):
    """Session update ``tool_call``: announce a tool call (title, kind, status, content)."""

    tool_call_id: ToolCallId
    title: str
    kind: Annotated[str | UnsetType, LENIENT] = UNSET
    status: Annotated[str | UnsetType, LENIENT] = UNSET
    content: Annotated[list[ToolCallContent] | UnsetType, LENIENT, SKIP_INVALID] = UNSET
    locations: Annotated[list[ToolCallLocation] | UnsetType, LENIENT, SKIP_INVALID] = UNSET
    raw_input: Annotated[Any, LENIENT] = UNSET
    raw_output: Annotated[Any, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class ToolCallUpdate(Model, gc=False, kw_only=True):
    """A patch of tool call ``toolCallId``: UNSET keeps a field, ``None`` clears it."""

    tool_call_id: ToolCallId
    kind: Annotated[str | UnsetType | None, LENIENT] = UNSET
    status: Annotated[str | UnsetType | None, LENIENT] = UNSET
    title: Annotated[str | UnsetType | None, LENIENT] = UNSET
    content: Annotated[list[ToolCallContent] | UnsetType | None, LENIENT, SKIP_INVALID] = UNSET
    locations: Annotated[list[ToolCallLocation] | UnsetType | None, LENIENT, SKIP_INVALID] = UNSET
    raw_input: Annotated[Any, LENIENT] = UNSET
    raw_output: Annotated[Any, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class PermissionOption(Model, gc=False, kw_only=True):
    """A choice offered in a permission request: ``optionId``, label and ``kind``."""

    option_id: PermissionOptionId
    name: str
    kind: str
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class SelectedPermissionOutcome(Model, tag_field="outcome", tag="selected", gc=False, kw_only=True):
    """Permission outcome ``selected``: the user picked ``optionId``."""

    option_id: PermissionOptionId
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class RequestPermissionRequest(Model, gc=False, kw_only=True):
    """Params of v1 ``session/request_permission``."""

    session_id: SessionId
    tool_call: ToolCallUpdate
    options: list[PermissionOption]
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class RequestPermissionResponse(Model, gc=False, kw_only=True):
    """Result of v1 ``session/request_permission``."""

    outcome: RequestPermissionOutcome
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class SessionToolCallUpdate(
    ToolCallUpdate, tag_field="sessionUpdate", tag="tool_call_update", kw_only=True
):
    """Session update ``tool_call_update``: patch the tool call ``toolCallId`` (UNSET keeps)."""


#: Tool call content; an unknown ``type`` is kept as ``msgspec.Raw``.
ToolCallContent: TypeAlias = Content | Diff | Terminal | Raw


class CancelledPermissionOutcome(
    Model, tag_field="outcome", tag="cancelled", gc=False, kw_only=True
):
    """Permission outcome ``cancelled``: the prompt turn was cancelled before the user chose."""


#: The outcome of a permission request; an unknown ``outcome`` is kept as ``msgspec.Raw``.
RequestPermissionOutcome: TypeAlias = CancelledPermissionOutcome | SelectedPermissionOutcome | Raw

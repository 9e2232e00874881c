"""``session/request_permission``: options, subjects and outcomes (PR-01..PR-11)."""

from __future__ import annotations

from typing import Annotated, TypeAlias

import msgspec
from msgspec import UNSET, Raw, UnsetType

from acp2.schema._base import LENIENT, Model
from acp2.schema.common import (
    AbsolutePath,
    MetaField,
    PermissionOptionId,
    SessionId,
    TerminalId,
    ToolCallId,
)
from acp2.schema.tools import ToolCallFields

__all__ = [
    "CancelledPermissionOutcome",
    "CommandPermissionSubject",
    "PermissionOption",
    "RequestPermissionOutcome",
    "RequestPermissionRequest",
    "RequestPermissionResponse",
    "RequestPermissionSubject",
    "SelectedPermissionOutcome",
    "ToolCallPermissionSubject",
]


class PermissionOption(Model, gc=False, kw_only=True):
    """A choice offered to the user: ``optionId``, label ``name`` and ``kind`` (a UI hint)."""

    option_id: PermissionOptionId
    name: str
    #: ``allow_once``, ``allow_always``, ``reject_once``, ``reject_always`` or custom.
    kind: str
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class ToolCallPermissionSubject(Model, tag_field="type", tag="tool_call", gc=False, kw_only=True):
    """Subject ``{type:"tool_call", toolCall}``: a tool-call patch applied before prompting."""

    tool_call: ToolCallFields
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class CommandPermissionSubject(Model, tag_field="type", tag="command", gc=False, kw_only=True):
    """Subject ``{type:"command"}``: a shell ``command`` the agent wants to run in ``cwd``."""

    command: str
    cwd: AbsolutePath
    tool_call_id: Annotated[ToolCallId | UnsetType | None, LENIENT] = UNSET
    terminal_id: Annotated[TerminalId | UnsetType | None, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


#: What a permission request is about; an unknown ``type`` is kept as ``msgspec.Raw``.
RequestPermissionSubject: TypeAlias = ToolCallPermissionSubject | CommandPermissionSubject | Raw


class RequestPermissionRequest(Model, gc=False, kw_only=True):
    """Params of ``session/request_permission``: prompt text, optional subject, options."""

    session_id: SessionId
    title: str
    description: Annotated[str | UnsetType | None, LENIENT] = UNSET
    subject: RequestPermissionSubject | UnsetType | None = UNSET
    options: Annotated[list[PermissionOption], msgspec.Meta(min_length=1)]
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class SelectedPermissionOutcome(Model, tag_field="outcome", tag="selected", gc=False, kw_only=True):
    """Outcome ``{outcome:"selected", optionId}``: the user picked that option."""

    option_id: PermissionOptionId
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class CancelledPermissionOutcome(
    Model, tag_field="outcome", tag="cancelled", gc=False, kw_only=True
):
    """Outcome ``{outcome:"cancelled"}``: cancelled, dismissed or declined -- not approved."""

    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


#: A permission outcome; an unknown ``outcome`` is kept as ``msgspec.Raw`` and must never
#: be read as approval (PR-08).
RequestPermissionOutcome: TypeAlias = SelectedPermissionOutcome | CancelledPermissionOutcome | Raw


class RequestPermissionResponse(Model, gc=False, kw_only=True):
    """Result of ``session/request_permission``: the ``outcome``."""

    outcome: RequestPermissionOutcome
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")

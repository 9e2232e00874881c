"""Scalar aliases, open enums and field helpers shared by every model module.

Identifiers (``SessionId``, ``MessageId``, ...) are plain ``str`` aliases: they are opaque
on the wire. Open enums are typed ``str`` on the models, because a peer may send a
``_``-prefixed custom value or a value from a future ACP version; the known values are
listed here as ``Literal`` aliases and tuples for documentation and for UI code.
"""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal, TypeAlias

import msgspec
from msgspec import UnsetType

from acp2.schema._base import LENIENT

__all__ = [
    "COMPACTION_STATUSES",
    "DIFF_FILE_TYPES",
    "DIFF_OPERATIONS",
    "DIFF_PATCH_FORMATS",
    "FOREGROUND_STATES",
    "ICON_THEMES",
    "NOTICE_SEVERITIES",
    "PERMISSION_OPTION_KINDS",
    "PLAN_ENTRY_PRIORITIES",
    "PLAN_ENTRY_STATUSES",
    "ROLES",
    "SESSION_CONFIG_OPTION_CATEGORIES",
    "STOP_REASONS",
    "STRING_FORMATS",
    "TOOL_CALL_STATUSES",
    "TOOL_KINDS",
    "AbsolutePath",
    "AuthMethodId",
    "CompactionId",
    "CompactionStatus",
    "DiffFileType",
    "DiffOperation",
    "DiffPatchFormat",
    "ElicitationId",
    "ElicitationSchemaType",
    "ForegroundState",
    "IconTheme",
    "MediaType",
    "MessageId",
    "MetaField",
    "NoticeSeverity",
    "PermissionOptionId",
    "PermissionOptionKind",
    "PlanEntryPriority",
    "PlanEntryStatus",
    "PlanId",
    "ProtocolVersion",
    "Role",
    "SessionConfigGroupId",
    "SessionConfigId",
    "SessionConfigOptionCategory",
    "SessionConfigValueId",
    "SessionId",
    "SessionListCursor",
    "StopReason",
    "StringFormat",
    "TerminalId",
    "ToolCallId",
    "ToolCallStatus",
    "ToolKind",
    "UInt",
]

#: ``_meta`` as declared on every model: an object, ``null`` or omitted, lenient on decode
#: (the schema marks every ``_meta`` ``x-deserialize-default-on-error``).
MetaField: TypeAlias = Annotated[dict[str, Any] | UnsetType | None, LENIENT]

#: A non-negative integer (the schema's ``uint32`` / ``uint64``).
UInt: TypeAlias = Annotated[int, msgspec.Meta(ge=0)]

# -- opaque identifiers ---------------------------------------------------------------

#: An absolute filesystem path in the host's native syntax (never a URI).
AbsolutePath: TypeAlias = str
SessionId: TypeAlias = str
MessageId: TypeAlias = str
ToolCallId: TypeAlias = str
TerminalId: TypeAlias = str
PlanId: TypeAlias = str
CompactionId: TypeAlias = str
AuthMethodId: TypeAlias = str
ElicitationId: TypeAlias = str
PermissionOptionId: TypeAlias = str
SessionConfigId: TypeAlias = str
SessionConfigGroupId: TypeAlias = str
SessionConfigValueId: TypeAlias = str
SessionListCursor: TypeAlias = str
#: A MIME type such as ``"image/png"``.
MediaType: TypeAlias = str
#: The protocol version number, ``0..65535``.
ProtocolVersion: TypeAlias = Annotated[int, msgspec.Meta(ge=0, le=65535)]

# -- open enums: the models use ``str``; these are the values ACP defines ---------------

StopReason: TypeAlias = Literal[
    "end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled", "error"
]
#: Stop reasons on an ``idle`` state update (``error`` is Nov-only; Aug peers see it as unknown).
STOP_REASONS: Final[tuple[StopReason, ...]] = (
    "end_turn",
    "max_tokens",
    "max_turn_requests",
    "refusal",
    "cancelled",
    "error",
)

#: The foreground states a ``state_update`` reports (``state``). Not to be confused with
#: :class:`acp2.SessionState`, the client's reduced view of a whole session.
ForegroundState: TypeAlias = Literal["running", "idle", "requires_action"]
FOREGROUND_STATES: Final[tuple[ForegroundState, ...]] = ("running", "idle", "requires_action")

ToolKind: TypeAlias = Literal[
    "read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode", "other"
]
TOOL_KINDS: Final[tuple[ToolKind, ...]] = (
    "read",
    "edit",
    "delete",
    "move",
    "search",
    "execute",
    "think",
    "fetch",
    "switch_mode",
    "other",
)

ToolCallStatus: TypeAlias = Literal[
    "pending", "in_progress", "paused", "completed", "failed", "cancelled"
]
#: Tool call statuses (``paused`` is Nov-only).
TOOL_CALL_STATUSES: Final[tuple[ToolCallStatus, ...]] = (
    "pending",
    "in_progress",
    "paused",
    "completed",
    "failed",
    "cancelled",
)

PlanEntryPriority: TypeAlias = Literal["high", "medium", "low"]
PLAN_ENTRY_PRIORITIES: Final[tuple[PlanEntryPriority, ...]] = ("high", "medium", "low")

PlanEntryStatus: TypeAlias = Literal["pending", "in_progress", "completed", "cancelled"]
PLAN_ENTRY_STATUSES: Final[tuple[PlanEntryStatus, ...]] = (
    "pending",
    "in_progress",
    "completed",
    "cancelled",
)

PermissionOptionKind: TypeAlias = Literal[
    "allow_once", "allow_always", "reject_once", "reject_always"
]
PERMISSION_OPTION_KINDS: Final[tuple[PermissionOptionKind, ...]] = (
    "allow_once",
    "allow_always",
    "reject_once",
    "reject_always",
)

SessionConfigOptionCategory: TypeAlias = Literal["mode", "model", "model_config", "thought_level"]
SESSION_CONFIG_OPTION_CATEGORIES: Final[tuple[SessionConfigOptionCategory, ...]] = (
    "mode",
    "model",
    "model_config",
    "thought_level",
)

DiffOperation: TypeAlias = Literal["add", "delete", "modify", "move", "copy"]
DIFF_OPERATIONS: Final[tuple[DiffOperation, ...]] = ("add", "delete", "modify", "move", "copy")

DiffFileType: TypeAlias = Literal["text", "binary", "directory", "symlink"]
DIFF_FILE_TYPES: Final[tuple[DiffFileType, ...]] = ("text", "binary", "directory", "symlink")

DiffPatchFormat: TypeAlias = Literal["git_patch"]
DIFF_PATCH_FORMATS: Final[tuple[DiffPatchFormat, ...]] = ("git_patch",)

NoticeSeverity: TypeAlias = Literal["info", "warning", "error"]
NOTICE_SEVERITIES: Final[tuple[NoticeSeverity, ...]] = ("info", "warning", "error")

CompactionStatus: TypeAlias = Literal["in_progress", "completed", "failed", "cancelled"]
COMPACTION_STATUSES: Final[tuple[CompactionStatus, ...]] = (
    "in_progress",
    "completed",
    "failed",
    "cancelled",
)

IconTheme: TypeAlias = Literal["light", "dark"]
ICON_THEMES: Final[tuple[IconTheme, ...]] = ("light", "dark")

Role: TypeAlias = Literal["assistant", "user"]
ROLES: Final[tuple[Role, ...]] = ("assistant", "user")

StringFormat: TypeAlias = Literal["email", "uri", "date", "date-time"]
STRING_FORMATS: Final[tuple[StringFormat, ...]] = ("email", "uri", "date", "date-time")

#: The only value of an elicitation form schema's ``type`` (a closed enum).
ElicitationSchemaType: TypeAlias = Literal["object"]

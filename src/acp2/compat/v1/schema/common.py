"""v1 scalar aliases, open enums and field helpers shared by the v1 model modules.

Identifiers are plain ``str`` aliases (opaque on the wire). v1 writes its enums as closed
``oneOf`` lists; the models still type them ``str`` (like v2) so that a value from a newer
v1 minor version decodes instead of failing the whole message. The known values are the
``Literal`` aliases and tuples here.
"""

from __future__ import annotations

from typing import Final, Literal, TypeAlias, get_args

from msgspec import Raw

from acp2.schema._base import LENIENT, SKIP_INVALID, Model
from acp2.schema.common import MetaField, UInt

__all__ = [
    "LENIENT",
    "PERMISSION_OPTION_KINDS",
    "PLAN_ENTRY_PRIORITIES",
    "PLAN_ENTRY_STATUSES",
    "PROTOCOL_VERSION",
    "ROLES",
    "SESSION_CONFIG_OPTION_CATEGORIES",
    "SKIP_INVALID",
    "STOP_REASONS",
    "STRING_FORMATS",
    "TOOL_CALL_STATUSES",
    "TOOL_KINDS",
    "AuthMethodId",
    "ElicitationId",
    "ElicitationSchemaType",
    "ErrorCode",
    "ExtNotification",
    "ExtRequest",
    "ExtResponse",
    "MessageId",
    "MetaField",
    "Model",
    "PermissionOptionId",
    "PermissionOptionKind",
    "PlanEntryPriority",
    "PlanEntryStatus",
    "ProtocolVersion",
    "RequestId",
    "Role",
    "SessionConfigGroupId",
    "SessionConfigId",
    "SessionConfigOptionCategory",
    "SessionConfigValueId",
    "SessionId",
    "SessionModeId",
    "StopReason",
    "StringFormat",
    "TerminalId",
    "ToolCallId",
    "ToolCallStatus",
    "ToolKind",
    "UInt",
]

#: The protocol version these models speak.
PROTOCOL_VERSION: Final = 1

AuthMethodId: TypeAlias = str
ElicitationId: TypeAlias = str
MessageId: TypeAlias = str
PermissionOptionId: TypeAlias = str
SessionConfigGroupId: TypeAlias = str
SessionConfigId: TypeAlias = str
SessionConfigValueId: TypeAlias = str
SessionId: TypeAlias = str
SessionModeId: TypeAlias = str
TerminalId: TypeAlias = str
ToolCallId: TypeAlias = str

#: ``uint16`` on the wire; v1 peers send ``1`` (and a v2 peer ``2``).
ProtocolVersion: TypeAlias = int
#: A JSON-RPC id: ``null``, an integer or a string (real v1 agents send ``0`` and UUIDs).
RequestId: TypeAlias = int | str | None
#: A JSON-RPC error code (the schema lists the known ones and allows any ``int32``).
ErrorCode: TypeAlias = int
#: Extension method params / results / notifications: any JSON, kept as-is.
ExtRequest: TypeAlias = Raw
ExtResponse: TypeAlias = Raw
ExtNotification: TypeAlias = Raw


StopReason: TypeAlias = Literal[
    "end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"
]
ToolKind: TypeAlias = Literal[
    "read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode", "other"
]
ToolCallStatus: TypeAlias = Literal["pending", "in_progress", "completed", "failed"]
PlanEntryPriority: TypeAlias = Literal["high", "medium", "low"]
#: v1 has no ``cancelled`` plan entry status (v2 has).
PlanEntryStatus: TypeAlias = Literal["pending", "in_progress", "completed"]
PermissionOptionKind: TypeAlias = Literal[
    "allow_once", "allow_always", "reject_once", "reject_always"
]
Role: TypeAlias = Literal["assistant", "user"]
SessionConfigOptionCategory: TypeAlias = Literal["mode", "model", "model_config", "thought_level"]
StringFormat: TypeAlias = Literal["email", "uri", "date", "date-time"]
ElicitationSchemaType: TypeAlias = Literal["object"]

STOP_REASONS: Final[tuple[str, ...]] = get_args(StopReason)
TOOL_KINDS: Final[tuple[str, ...]] = get_args(ToolKind)
TOOL_CALL_STATUSES: Final[tuple[str, ...]] = get_args(ToolCallStatus)
PLAN_ENTRY_PRIORITIES: Final[tuple[str, ...]] = get_args(PlanEntryPriority)
PLAN_ENTRY_STATUSES: Final[tuple[str, ...]] = get_args(PlanEntryStatus)
PERMISSION_OPTION_KINDS: Final[tuple[str, ...]] = get_args(PermissionOptionKind)
ROLES: Final[tuple[str, ...]] = get_args(Role)
SESSION_CONFIG_OPTION_CATEGORIES: Final[tuple[str, ...]] = get_args(SessionConfigOptionCategory)
STRING_FORMATS: Final[tuple[str, ...]] = get_args(StringFormat)

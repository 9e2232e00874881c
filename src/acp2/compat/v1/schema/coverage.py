"""How every ``$defs`` entry of the vendored v1 schema is represented in the v1 models.

Each definition is exactly one of: a ``Model`` class of the same name in
:mod:`acp2.compat.v1.schema`; a module-level alias of the same name listed in
:data:`ALIASES`; or listed in :data:`NOT_MODELLED` with the reason. A test walks the
vendored schema and fails on anything missing.
"""

from __future__ import annotations

from typing import Final

__all__ = ["ALIASES", "NOT_MODELLED"]

_ENVELOPE = "JSON-RPC envelope: params and results are decoded with acp2.compat.v1.methods"
_RESOURCE = "untagged variant of EmbeddedResourceResource: merged into that class (text or blob)"
_AUTH = (
    "variant of AuthMethod, which mixes an untagged default (agent) and a tagged terminal "
    "kind: merged into the one class AuthMethod (type optional)"
)
_MCP = (
    "variant of McpServer, which mixes tagged http/sse and untagged stdio: merged into the "
    "one class McpServer with a __post_init__ shape check"
)
_SCOPE = (
    "untagged scope of elicitation/create: its fields are optional fields of "
    "ElicitationFormMode / ElicitationUrlMode, whose __post_init__ requires a scope"
)
_MULTI = (
    "variant of MultiSelectItems, which mixes tagged and untagged objects: merged into the "
    "one class MultiSelectItems (type/enum/anyOf) with a __post_init__ shape check"
)

#: v1 ``$defs`` that are deliberately not a class, with the reason.
NOT_MODELLED: Final[dict[str, str]] = {
    "AgentNotification": _ENVELOPE,
    "AgentRequest": _ENVELOPE,
    "AgentResponse": _ENVELOPE,
    "ClientNotification": _ENVELOPE,
    "ClientRequest": _ENVELOPE,
    "ClientResponse": _ENVELOPE,
    "TextResourceContents": _RESOURCE,
    "BlobResourceContents": _RESOURCE,
    "AuthMethodAgent": _AUTH,
    "AuthMethodTerminal": _AUTH,
    "McpServerHttp": _MCP,
    "McpServerSse": _MCP,
    "McpServerStdio": _MCP,
    "ElicitationSessionScope": _SCOPE,
    "ElicitationRequestScope": _SCOPE,
    "StringMultiSelectItems": _MULTI,
    "TitledMultiSelectItems": _MULTI,
    "SessionConfigSelectGroup": (
        "a select's options are flat choices or groups (an untagged union of arrays): "
        "groups are SessionConfigSelectOption entries with group + options"
    ),
}

#: v1 ``$defs`` that are module-level aliases of the same name.
ALIASES: Final[frozenset[str]] = frozenset(
    {
        # opaque strings
        "AuthMethodId",
        "ElicitationId",
        "MessageId",
        "PermissionOptionId",
        "SessionConfigGroupId",
        "SessionConfigId",
        "SessionConfigValueId",
        "SessionId",
        "SessionModeId",
        "TerminalId",
        "ToolCallId",
        # numbers and JSON-RPC values
        "ErrorCode",
        "ExtNotification",
        "ExtRequest",
        "ExtResponse",
        "ProtocolVersion",
        "RequestId",
        "ElicitationContentValue",
        # enums (the models use str; the aliases are Literal of the known values)
        "ElicitationSchemaType",
        "PermissionOptionKind",
        "PlanEntryPriority",
        "PlanEntryStatus",
        "Role",
        "SessionConfigOptionCategory",
        "StopReason",
        "StringFormat",
        "ToolCallStatus",
        "ToolKind",
        # open unions: A | B | msgspec.Raw
        "ContentBlock",
        "CreateElicitationRequest",
        "CreateElicitationResponse",
        "ElicitationPropertySchema",
        "RequestPermissionOutcome",
        "SessionConfigOption",
        "SessionUpdate",
        "ToolCallContent",
        # a single-variant union and a list alias
        "AvailableCommandInput",
        "SessionConfigSelectOptions",
    }
)

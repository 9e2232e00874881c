"""How every ``$defs`` entry of the Aug and Nov schemas is represented in :mod:`acp2.schema`.

Each definition is exactly one of:

* a class of the same name (a ``Model`` subclass);
* a module-level type alias of the same name, listed in :data:`ALIASES` (opaque string
  ids, open enums typed ``str``, open unions ``A | B | msgspec.Raw``, any-JSON values);
* listed in :data:`NOT_MODELLED` with the reason (JSON-RPC envelopes, and untagged
  unions that msgspec cannot decode, merged into one class with a ``__post_init__`` check).

A test walks both vendored schemas and checks that nothing is missing.
"""

from __future__ import annotations

from typing import Final

__all__ = ["ALIASES", "NOT_MODELLED"]

_ENVELOPE = "JSON-RPC envelope: built and parsed by acp2.rpc; params and results are decoded with the method table"  # noqa: E501
_STATE = "variant of the state_update union on `state`: merged into the one class StateUpdate (state: str)"  # noqa: E501
_SCOPE = (
    "untagged scope of elicitation/create: its fields are optional fields of "
    "ElicitationFormMode / ElicitationUrlMode, whose __post_init__ requires a scope"
)
_RESOURCE = (
    "untagged variant of EmbeddedResourceResource: merged into that class (text or blob; "
    "msgspec cannot decode an untagged union of objects)"
)
_MULTI = (
    "variant of MultiSelectItems, which mixes tagged and untagged objects: merged into the "
    "one class MultiSelectItems (type/enum/anyOf) with a __post_init__ shape check"
)

#: ``$defs`` that are deliberately not a class, with the reason.
NOT_MODELLED: Final[dict[str, str]] = {
    "AgentNotification": _ENVELOPE,
    "AgentRequest": _ENVELOPE,
    "AgentResponse": _ENVELOPE,
    "ClientNotification": _ENVELOPE,
    "ClientRequest": _ENVELOPE,
    "ClientResponse": _ENVELOPE,
    "ProtocolLevelNotification": _ENVELOPE + " (Aug only: a batch entry for $/cancel_request)",
    "TextResourceContents": _RESOURCE,
    "BlobResourceContents": _RESOURCE,
    "ElicitationSessionScope": _SCOPE,
    "ElicitationRequestScope": _SCOPE,
    "RunningStateUpdate": _STATE,
    "IdleStateUpdate": _STATE,
    "RequiresActionStateUpdate": _STATE,
    "ErrorStopReason": "Nov variant of IdleStateUpdate on stopReason 'error': its `error` field is StateUpdate.error",  # noqa: E501
    "SessionConfigSelectGroup": (
        "a select's options are flat choices or groups (an untagged union of arrays): "
        "groups are SessionConfigSelectOption entries with groupId + options"
    ),
    "StringMultiSelectItems": _MULTI,
    "TitledMultiSelectItems": _MULTI,
}

#: ``$defs`` that are module-level type aliases of the same name in :mod:`acp2.schema`.
ALIASES: Final[frozenset[str]] = frozenset(
    {
        # opaque strings
        "AbsolutePath",
        "AuthMethodId",
        "CompactionId",
        "ElicitationId",
        "MediaType",
        "MessageId",
        "PermissionOptionId",
        "PlanId",
        "SessionConfigGroupId",
        "SessionConfigId",
        "SessionConfigValueId",
        "SessionId",
        "SessionListCursor",
        "TerminalId",
        "ToolCallId",
        # numbers and JSON-RPC values
        "ErrorCode",
        "ErrorData",
        "ExtNotification",
        "ExtRequest",
        "ExtResponse",
        "ProtocolVersion",
        "RequestId",
        "ElicitationContentValue",
        # open enums (the models use str; the aliases are Literal of the known values)
        "CompactionStatus",
        "DiffFileType",
        "DiffPatchFormat",
        "ElicitationSchemaType",
        "IconTheme",
        "NoticeSeverity",
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
        "AuthMethod",
        "AvailableCommandInput",
        "BackgroundWork",
        "ContentBlock",
        "CreateElicitationRequest",
        "CreateElicitationResponse",
        "DiffChange",
        "ElicitationPropertySchema",
        "McpServer",
        "PlanUpdateContent",
        "ReplayFrom",
        "RequestPermissionOutcome",
        "RequestPermissionSubject",
        "SessionConfigOption",
        "SessionUpdate",
        "ToolCallContent",
        # a list alias
        "SessionConfigSelectOptions",
        # Nov renames of classes (same object)
        "ClientAuthCapabilities",
        "Command",
    }
)

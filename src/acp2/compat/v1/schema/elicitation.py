"""v1 elicitation: ``elicitation/create`` (form / URL modes), actions, ``elicitation/complete``.

``CreateElicitationRequest`` is an open union tagged by ``mode``. Each mode also carries a
scope -- ``sessionId`` (+ ``toolCallId``) or ``requestId`` -- which the schema writes as an
untagged union; here the scope fields are optional on each mode and ``__post_init__``
requires at least one scope (Aug ``anyOf``; Nov's ``oneOf`` asks senders for exactly one).
"""

from __future__ import annotations

from typing import Annotated, Any, TypeAlias

import msgspec
from msgspec import UNSET, Raw, UnsetType

from acp2.compat.v1.schema.common import ElicitationId, MetaField, RequestId, SessionId, ToolCallId
from acp2.compat.v1.schema.elicitation_schema import ElicitationSchema
from acp2.schema._base import LENIENT, Model

__all__ = [
    "CompleteElicitationNotification",
    "CreateElicitationRequest",
    "CreateElicitationResponse",
    "ElicitationAcceptAction",
    "ElicitationCancelAction",
    "ElicitationContentValue",
    "ElicitationDeclineAction",
    "ElicitationFormMode",
    "ElicitationUrlMode",
]


class _Scoped(Model, gc=False, kw_only=True):
    message: str
    #: Session scope: the session (and optionally the tool call) this is about.
    session_id: SessionId | UnsetType = UNSET
    tool_call_id: Annotated[ToolCallId | UnsetType | None, LENIENT] = UNSET
    #: Request scope: a pending client-to-agent request this is about.
    request_id: RequestId | UnsetType = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")

    def __post_init__(self) -> None:
        if self.session_id is UNSET and self.request_id is UNSET:
            raise ValueError("an elicitation needs a `sessionId` or a `requestId` scope")


class ElicitationFormMode(_Scoped, tag_field="mode", tag="form", kw_only=True):
    """Params of ``elicitation/create`` in ``form`` mode: ask for ``requestedSchema`` fields."""

    requested_schema: ElicitationSchema


class ElicitationUrlMode(_Scoped, tag_field="mode", tag="url", kw_only=True):
    """Params of ``elicitation/create`` in ``url`` mode: ask the user to open ``url``."""

    elicitation_id: ElicitationId
    url: str


#: Params of ``elicitation/create``; an unknown ``mode`` is kept as ``msgspec.Raw`` (EL-13).
CreateElicitationRequest: TypeAlias = ElicitationFormMode | ElicitationUrlMode | Raw

#: A submitted form value: string, integer, number, boolean, string list (Aug) or any
#: JSON value for custom property types (Nov).
ElicitationContentValue: TypeAlias = Any


class ElicitationAcceptAction(Model, tag_field="action", tag="accept", gc=False, kw_only=True):
    """Action ``accept``: the user submitted ``content`` (form) or agreed to open the URL."""

    content: dict[str, ElicitationContentValue] | UnsetType | None = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class ElicitationDeclineAction(Model, tag_field="action", tag="decline", gc=False, kw_only=True):
    """Action ``decline``: the user explicitly said no."""

    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class ElicitationCancelAction(Model, tag_field="action", tag="cancel", gc=False, kw_only=True):
    """Action ``cancel``: the user dismissed the request without choosing."""

    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


#: Result of ``elicitation/create``; an unknown ``action`` is kept as ``msgspec.Raw`` and
#: handled as ``cancel`` (EL-08).
CreateElicitationResponse: TypeAlias = (
    ElicitationAcceptAction | ElicitationDeclineAction | ElicitationCancelAction | Raw
)


class CompleteElicitationNotification(Model, gc=False, kw_only=True):
    """Params of ``elicitation/complete``: the URL elicitation ``elicitationId`` finished."""

    elicitation_id: ElicitationId
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")

"""JSON-RPC level wire types: request ids, error objects, ``$/cancel_request``, extensions.

The envelopes themselves (``{"jsonrpc":"2.0", "id", "method", "params"}``, results and
errors) are built and parsed by :mod:`acp2.rpc`; this module holds the schema types that
appear inside them.
"""

from __future__ import annotations

from typing import Annotated, Any, Final, TypeAlias

import msgspec
from msgspec import UNSET, Raw

from acp2.schema._base import LENIENT, Model
from acp2.schema.common import MetaField, ProtocolVersion, SessionId

__all__ = [
    "AUTH_REQUIRED",
    "ERROR_CODES",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "REQUEST_CANCELLED",
    "RESOURCE_NOT_FOUND",
    "UNSUPPORTED_PROTOCOL_VERSION",
    "CancelRequestNotification",
    "Error",
    "ErrorCode",
    "ErrorData",
    "ExtNotification",
    "ExtRequest",
    "ExtResponse",
    "RequestId",
    "SessionNotFoundErrorData",
    "UnsupportedProtocolVersionErrorData",
]

#: A JSON-RPC request id. Aug also allows ``null`` (Nov forbids it): accepted, never sent.
RequestId: TypeAlias = int | str | None

#: A JSON-RPC error code: any integer; the codes ACP defines are the constants below.
ErrorCode: TypeAlias = int
PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
METHOD_NOT_FOUND: Final = -32601
INVALID_PARAMS: Final = -32602
INTERNAL_ERROR: Final = -32603
REQUEST_CANCELLED: Final = -32800
AUTH_REQUIRED: Final = -32000
RESOURCE_NOT_FOUND: Final = -32002
#: Nov only.
UNSUPPORTED_PROTOCOL_VERSION: Final = -32022
ERROR_CODES: Final[tuple[int, ...]] = (
    PARSE_ERROR,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    INVALID_PARAMS,
    INTERNAL_ERROR,
    REQUEST_CANCELLED,
    AUTH_REQUIRED,
    RESOURCE_NOT_FOUND,
    UNSUPPORTED_PROTOCOL_VERSION,
)

#: The ``data`` of an error: any JSON value. Nov names two shapes, modelled below; decode
#: them from ``Error.data`` with ``msgspec.convert`` when the code says which applies.
ErrorData: TypeAlias = Any

#: Params of an extension (``_``-prefixed) request or notification, and an extension
#: result: any JSON value, kept undecoded.
ExtRequest: TypeAlias = Raw
ExtNotification: TypeAlias = Raw
ExtResponse: TypeAlias = Raw


class Error(Model, gc=False, kw_only=True):
    """A JSON-RPC error object: integer ``code``, one-sentence ``message``, optional ``data``."""

    code: ErrorCode
    message: str
    data: Annotated[Any, LENIENT] = UNSET


class UnsupportedProtocolVersionErrorData(Model, gc=False, kw_only=True):
    """``data`` of error -32022 (Nov): the ``requested`` and the ``supported`` versions."""

    requested: ProtocolVersion
    supported: list[ProtocolVersion]
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class SessionNotFoundErrorData(Model, gc=False, kw_only=True):
    """``data`` of error -32002 for an unknown session (Nov): its ``sessionId``."""

    session_id: SessionId
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class CancelRequestNotification(Model, gc=False, kw_only=True):
    """Params of ``$/cancel_request``: cancel the request ``requestId`` this side sent."""

    request_id: RequestId
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")

"""v1 JSON-RPC pieces with a schema definition: the error object and ``$/cancel_request``."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from msgspec import UNSET

from acp2.compat.v1.schema.common import (
    LENIENT,
    ErrorCode,
    MetaField,
    Model,
    RequestId,
)

__all__ = [
    "CancelRequestNotification",
    "Error",
]


class Error(Model, gc=False, kw_only=True):
    """A JSON-RPC error object: ``code``, ``message`` and optional ``data``."""

    code: ErrorCode
    message: str
    data: Annotated[Any, LENIENT] = UNSET


class CancelRequestNotification(Model, gc=False, kw_only=True):
    """Params of v1 ``$/cancel_request``."""

    request_id: RequestId
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")

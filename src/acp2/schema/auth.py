"""Authentication: the ``authMethods`` an agent offers, ``auth/login``, ``auth/logout`` (AU-*)."""

from __future__ import annotations

from typing import Annotated, TypeAlias

import msgspec
from msgspec import UNSET, Raw, UnsetType

from acp2.schema._base import LENIENT, SKIP_INVALID, Model
from acp2.schema.common import AuthMethodId, MetaField
from acp2.schema.mcp import EnvVariable

__all__ = [
    "AuthMethod",
    "AuthMethodAgent",
    "AuthMethodTerminal",
    "LoginAuthRequest",
    "LoginAuthResponse",
    "LogoutAuthRequest",
    "LogoutAuthResponse",
]


class AuthMethodAgent(Model, tag_field="type", tag="agent", gc=False, kw_only=True):
    """Auth method ``{type:"agent"}``: the agent logs in when asked with ``auth/login``."""

    method_id: AuthMethodId
    name: str
    description: Annotated[str | UnsetType | None, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class AuthMethodTerminal(Model, tag_field="type", tag="terminal", gc=False, kw_only=True):
    """Auth method ``{type:"terminal"}``: the client re-runs the agent with ``args`` / ``env``.

    Never passed to ``auth/login`` (AU-04). Omitted or ``null`` ``args`` / ``env`` mean ``[]``.
    """

    method_id: AuthMethodId
    name: str
    description: Annotated[str | UnsetType | None, LENIENT] = UNSET
    args: Annotated[list[str] | UnsetType, LENIENT, SKIP_INVALID] = UNSET
    env: Annotated[list[EnvVariable] | UnsetType, LENIENT, SKIP_INVALID] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


#: An authentication method; an unknown ``type`` is kept as ``msgspec.Raw`` (AU-03).
AuthMethod: TypeAlias = AuthMethodTerminal | AuthMethodAgent | Raw


class LoginAuthRequest(Model, gc=False, kw_only=True):
    """Params of ``auth/login``: log in with the advertised ``agent`` method ``methodId``."""

    method_id: AuthMethodId
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class LoginAuthResponse(Model, gc=False, kw_only=True):
    """Result of ``auth/login``: ``{}`` on success."""

    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class LogoutAuthRequest(Model, gc=False, kw_only=True):
    """Params of ``auth/logout``: ``{}``."""

    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class LogoutAuthResponse(Model, gc=False, kw_only=True):
    """Result of ``auth/logout``: ``{}``."""

    meta: MetaField = msgspec.field(default=UNSET, name="_meta")

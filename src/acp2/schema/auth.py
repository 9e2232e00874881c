"""Authentication: the ``authMethods`` an agent offers, ``auth/login``, ``auth/logout`` (AU-*)."""

from __future__ import annotations

from typing import Annotated, TypeAlias

import msgspec
from msgspec import UNSET, Raw, UnsetType

from acp2.schema._base import LENIENT, SKIP_INVALID, Model
from acp2.schema.common import AuthMethodId, MetaField
from acp2.schema.mcp import EnvVariable

__all__ = [
    "AuthAccount",
    "AuthMethod",
    "AuthMethodAgent",
    "AuthMethodTerminal",
    "AuthStatusRequest",
    "AuthStatusResponse",
    "AuthStatusUpdateNotification",
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


# -- auth status (unstable): modelled from the Rust schema crate's v2 ``AuthStatusResponse``,
# ``AuthStatusUpdateNotification`` and ``AuthAccount`` (docs.rs
# ``agent-client-protocol-schema`` 1.15 to 1.22, feature ``unstable_auth_status``) and the
# RFD page ``rfds/get-auth-state``. No vendored schema has them.


class AuthAccount(Model, gc=False, kw_only=True):
    """One account or credential the agent has configured (unstable), for display only.

    ``label`` names it on its own (say, a subscription or an API key); ``active`` says
    whether the agent uses it by default (several may be). None of it is a stable account
    identifier, and it is peer text: sanitize before showing it, keep it out of logs.
    """

    label: str
    active: Annotated[bool | UnsetType | None, LENIENT] = UNSET
    name: Annotated[str | UnsetType | None, LENIENT] = UNSET
    email: Annotated[str | UnsetType | None, LENIENT] = UNSET
    organization: Annotated[str | UnsetType | None, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class AuthStatusRequest(Model, gc=False, kw_only=True):
    """Params of ``auth/status`` (unstable, needs ``auth.status``): ``{}``."""

    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class AuthStatusResponse(Model, gc=False, kw_only=True):
    """Result of ``auth/status`` (unstable): the agent's authentication ``state``.

    ``state`` is ``authenticated`` (credentials configured, not necessarily valid),
    ``unauthenticated`` (the user must sign in), ``not_required``, ``unknown`` or a custom /
    future value, which a client treats as ``unknown``. ``accounts`` is display only;
    omitted means none.
    """

    state: str
    accounts: Annotated[list[AuthAccount] | UnsetType, LENIENT, SKIP_INVALID] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class AuthStatusUpdateNotification(AuthStatusResponse, kw_only=True):
    """Params of ``auth/status_update`` (unstable): the agent's authentication status
    changed; the same fields as :class:`AuthStatusResponse`. Only an agent advertising
    ``auth.status`` sends it; acp2's client does not act on it (it is logged at debug)."""

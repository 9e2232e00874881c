"""v1 ``initialize``, ``authenticate`` and ``logout``, with the auth methods an agent offers."""

from __future__ import annotations

from typing import Annotated

import msgspec
from msgspec import UNSET, UnsetType

from acp2.compat.v1.schema.capabilities import AgentCapabilities, ClientCapabilities
from acp2.compat.v1.schema.common import (
    LENIENT,
    SKIP_INVALID,
    AuthMethodId,
    MetaField,
    Model,
    ProtocolVersion,
)

__all__ = [
    "AuthMethod",
    "AuthenticateRequest",
    "AuthenticateResponse",
    "Implementation",
    "InitializeRequest",
    "InitializeResponse",
    "LogoutRequest",
    "LogoutResponse",
]


class Implementation(Model, gc=False, kw_only=True):
    """Name, optional title and version of a client or agent (``clientInfo`` / ``agentInfo``)."""

    name: str
    title: Annotated[str | UnsetType | None, LENIENT] = UNSET
    version: str
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class InitializeRequest(Model, gc=False, kw_only=True):
    """Params of v1 ``initialize``."""

    protocol_version: ProtocolVersion
    client_capabilities: Annotated[ClientCapabilities | UnsetType, LENIENT] = UNSET
    client_info: Annotated[Implementation | UnsetType | None, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class InitializeResponse(Model, gc=False, kw_only=True):
    """Result of v1 ``initialize``."""

    protocol_version: ProtocolVersion
    agent_capabilities: Annotated[AgentCapabilities | UnsetType, LENIENT] = UNSET
    auth_methods: Annotated[list[AuthMethod] | UnsetType, LENIENT, SKIP_INVALID] = UNSET
    agent_info: Annotated[Implementation | UnsetType | None, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class AuthenticateRequest(Model, gc=False, kw_only=True):
    """Params of v1 ``authenticate``."""

    method_id: AuthMethodId
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class AuthenticateResponse(Model, gc=False, kw_only=True):
    """Result of v1 ``authenticate``."""

    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class LogoutRequest(Model, gc=False, kw_only=True):
    """Params of v1 ``logout``: ``{}``."""

    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class LogoutResponse(Model, gc=False, kw_only=True):
    """Result of v1 ``logout``."""

    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class AuthMethod(Model, gc=False, kw_only=True):
    """A v1 auth method: the default (agent) kind has no ``type``; ``type:"terminal"`` has args.

    The schema's union of ``AuthMethodAgent`` (untagged, the default) and
    ``AuthMethodTerminal`` (tagged ``type: "terminal"``) merged into one struct, because
    msgspec cannot mix tagged and untagged variants. ``args`` / ``env`` belong to the
    terminal kind; any other ``type`` is kept as a string (its unknown fields are not).
    """

    id: AuthMethodId
    name: str
    type: str | UnsetType = UNSET
    description: Annotated[str | UnsetType | None, LENIENT] = UNSET
    args: Annotated[list[str] | UnsetType, LENIENT, SKIP_INVALID] = UNSET
    env: Annotated[dict[str, str] | UnsetType, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")

    @property
    def is_terminal(self) -> bool:
        """Whether the client must run the agent itself (``type == "terminal"``)."""
        return self.type == "terminal"

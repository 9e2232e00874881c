"""The ``initialize`` handshake: versions, implementation info, capabilities (IN-01..IN-18)."""

from __future__ import annotations

from typing import Annotated

import msgspec
from msgspec import UNSET, UnsetType

from acp2.schema._base import LENIENT, SKIP_INVALID, Model
from acp2.schema.auth import AuthMethod
from acp2.schema.capabilities import AgentCapabilities, ClientCapabilities
from acp2.schema.common import MetaField, ProtocolVersion

__all__ = ["Implementation", "InitializeRequest", "InitializeResponse"]


class Implementation(Model, gc=False, kw_only=True):
    """Who is on the other end: ``name``, ``version`` and an optional display ``title``."""

    name: str
    version: str
    title: Annotated[str | UnsetType | None, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class InitializeRequest(Model, gc=False, kw_only=True):
    """Params of ``initialize``: the client's newest version, its info and capabilities.

    ``capabilities`` defaults to ``{}`` when missing and is always sent (inconsistency 12).
    """

    protocol_version: ProtocolVersion
    info: Implementation
    capabilities: Annotated[ClientCapabilities, LENIENT] = msgspec.field(
        default_factory=ClientCapabilities
    )
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class InitializeResponse(Model, gc=False, kw_only=True):
    """Result of ``initialize``: the chosen version, agent info, capabilities, auth methods.

    A non-empty ``auth_methods`` commits the agent to ``auth/login`` and ``auth/logout``.
    """

    protocol_version: ProtocolVersion
    info: Implementation
    capabilities: Annotated[AgentCapabilities, LENIENT] = msgspec.field(
        default_factory=AgentCapabilities
    )
    auth_methods: Annotated[list[AuthMethod] | UnsetType, LENIENT, SKIP_INVALID] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")

"""The LLM provider methods of the custom LLM endpoint RFD (Preview, unstable).

Modelled from the Rust schema crate's v2 types (docs.rs ``agent-client-protocol-schema``
1.13 on, feature ``unstable_llm_providers``: ``ListProvidersRequest`` /
``ListProvidersResponse``, ``ProviderInfo``, ``ProviderCurrentConfig``,
``SetProvidersRequest`` / ``SetProvidersResponse``, ``DisableProvidersRequest`` /
``DisableProvidersResponse``) and the RFD page ``rfds/custom-llm-endpoint``. No vendored
schema has them. Each is valid only towards an agent advertising ``capabilities.providers``.

``providers/list`` gives each provider's id, the protocols it speaks (``apiType``: an open
string, well-known ``openai``, ``anthropic``...), whether it may be disabled, and its
current *non-secret* routing (``current``: ``apiType`` and ``baseUrl``; null means
disabled). ``providers/set`` replaces one provider's routing, with the full ``headers`` map
(which may carry the API key: an agent never echoes it back); ``providers/disable`` turns
one off.
"""

from __future__ import annotations

from typing import Annotated

import msgspec
from msgspec import UNSET, UnsetType

from acp2.schema._base import LENIENT, SKIP_INVALID, Model
from acp2.schema.common import MetaField

__all__ = [
    "DisableProvidersRequest",
    "DisableProvidersResponse",
    "ListProvidersRequest",
    "ListProvidersResponse",
    "ProviderCurrentConfig",
    "ProviderInfo",
    "SetProvidersRequest",
    "SetProvidersResponse",
]


class ProviderCurrentConfig(Model, gc=False, kw_only=True):
    """A provider's effective routing, without secrets: the protocol and the base URL."""

    api_type: str
    base_url: str
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class ProviderInfo(Model, gc=False, kw_only=True):
    """One configurable provider: ``provider_id``, the protocols it ``supported``s,
    ``required`` (it may not be disabled) and its ``current`` routing (None: disabled)."""

    provider_id: str
    supported: Annotated[list[str], LENIENT, SKIP_INVALID]
    required: bool = False
    current: Annotated[ProviderCurrentConfig | UnsetType | None, LENIENT] = None
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class ListProvidersRequest(Model, gc=False, kw_only=True):
    """Params of ``providers/list``: none."""

    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class ListProvidersResponse(Model, gc=False, kw_only=True):
    """Result of ``providers/list``: every configurable provider."""

    providers: Annotated[list[ProviderInfo], LENIENT, SKIP_INVALID]
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class SetProvidersRequest(Model, gc=False, kw_only=True):
    """Params of ``providers/set``: replace the whole routing of ``provider_id``. The
    ``headers`` map is complete (authorization included); an agent keeps it secret."""

    provider_id: str
    api_type: str
    base_url: str
    headers: dict[str, str] = msgspec.field(default_factory=dict)
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")

    def __repr__(self) -> str:
        # The headers may hold an API key: never in a repr, so never in a log line.
        return (
            f"SetProvidersRequest(provider_id={self.provider_id!r}, "
            f"api_type={self.api_type!r}, base_url={self.base_url!r}, "
            f"headers=<{len(self.headers)} hidden>)"
        )


class SetProvidersResponse(Model, gc=False, kw_only=True):
    """Result of ``providers/set``: ``{}``."""

    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class DisableProvidersRequest(Model, gc=False, kw_only=True):
    """Params of ``providers/disable``: turn ``provider_id`` off (refused for a required
    one)."""

    provider_id: str
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class DisableProvidersResponse(Model, gc=False, kw_only=True):
    """Result of ``providers/disable``: ``{}``."""

    meta: MetaField = msgspec.field(default=UNSET, name="_meta")

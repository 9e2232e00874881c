"""``providers/list``, ``providers/set``, ``providers/disable`` on the agent side (the
custom LLM endpoint RFD; Preview, unstable).

An agent whose ``Agent.providers`` is a :class:`ProviderHost` advertises
``capabilities.providers`` and serves the three methods from the method table; without
one it advertises nothing and they answer ``-32601``. The host keeps the routing per
*owner*: the principal of the connection that set it (``None`` for the local user), so
one remote user cannot redirect another's model. Nothing here records the params: a
``providers/set`` is not a session update, never reaches the history, and its headers
(which may carry an API key) never reach a log line (their repr hides them).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from acp2.agent.bindings import Binding, bind
from acp2.schema.methods import PROVIDERS_DISABLE, PROVIDERS_LIST, PROVIDERS_SET
from acp2.schema.providers import (
    DisableProvidersRequest,
    DisableProvidersResponse,
    ListProvidersRequest,
    ListProvidersResponse,
    ProviderInfo,
    SetProvidersRequest,
    SetProvidersResponse,
)

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["ProviderHost", "bindings"]


class ProviderHost(Protocol):
    """What an agent author supplies to let clients route its model calls.

    Each method gets ``owner``, the principal of the calling connection as the store
    records it (None: the local user). ``set_provider`` and ``disable_provider`` raise
    :class:`~acp2.errors.InvalidParams` for an unknown provider id, an unsupported
    ``apiType`` or a bad URL, and for disabling a required provider, changing nothing.
    ``list_providers`` never returns secrets (``current`` holds the routing only).
    """

    def list_providers(self, owner: str | None) -> list[ProviderInfo]:
        """Every configurable provider as ``owner`` sees it."""
        ...

    def set_provider(self, owner: str | None, request: SetProvidersRequest) -> None:
        """Replace one provider's routing for ``owner``."""
        ...

    def disable_provider(self, owner: str | None, provider_id: str) -> None:
        """Turn one provider off for ``owner``."""
        ...


def bindings(host: ProviderHost | None, owner: Callable[[], str | None]) -> list[Binding]:
    """The three handlers when the agent has a provider ``host`` (else none); ``owner``
    gives the principal of the connection they serve."""
    if host is None:
        return []

    async def on_list(params: ListProvidersRequest) -> ListProvidersResponse:
        return ListProvidersResponse(providers=host.list_providers(owner()))

    async def on_set(params: SetProvidersRequest) -> SetProvidersResponse:
        host.set_provider(owner(), params)
        return SetProvidersResponse()

    async def on_disable(params: DisableProvidersRequest) -> DisableProvidersResponse:
        host.disable_provider(owner(), params.provider_id)
        return DisableProvidersResponse()

    return [
        bind(PROVIDERS_LIST, on_list),
        bind(PROVIDERS_SET, on_set),
        bind(PROVIDERS_DISABLE, on_disable),
    ]

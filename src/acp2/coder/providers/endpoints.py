"""The coding agent's model provider as ACP's custom LLM endpoint RFD sees it.

The agent advertises one provider, ``main``, speaking ``openai`` (chat completions). A
client may route it with ``providers/set``: the base URL of any OpenAI-compatible server
and the full header map, whose ``Authorization: Bearer KEY`` becomes the API key (the
other headers are sent as they are). ``providers/disable`` drops the client's routing:
the agent goes back to the model it was started with. Routing is kept per owner (the
principal of the connection that set it), in memory only: never in the session history,
and ``providers/list`` shows the protocol and base URL, never a header.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Final
from urllib.parse import urlsplit

from acp2.coder.providers.base import ChatModel
from acp2.errors import InvalidParams
from acp2.schema.providers import ProviderCurrentConfig, ProviderInfo, SetProvidersRequest

__all__ = ["MAIN", "OPENAI", "CoderProviders"]

#: The provider id the coding agent advertises.
MAIN: Final = "main"
#: The protocol it speaks.
OPENAI: Final = "openai"


class CoderProviders:
    """The :class:`~acp2.agent.providers.ProviderHost` of the coding agent; ``default``
    is the model it was started with (scripted or OpenAI-compatible)."""

    def __init__(self, default: ChatModel) -> None:
        self.default = default
        self._routes: dict[str | None, ChatModel] = {}

    def model_for(self, owner: str | None) -> ChatModel:
        """The model a session of ``owner`` uses: the client's routing, else the default."""
        return self._routes.get(owner, self.default)

    def list_providers(self, owner: str | None) -> list[ProviderInfo]:
        """``main``: its protocol and its current base URL (None with the scripted model)."""
        info = ProviderInfo(provider_id=MAIN, supported=[OPENAI], required=False)
        base_url = _base_url(self.model_for(owner))
        info.current = (
            None if base_url is None else ProviderCurrentConfig(api_type=OPENAI, base_url=base_url)
        )
        return [info]

    def set_provider(self, owner: str | None, request: SetProvidersRequest) -> None:
        """Route ``main`` for ``owner`` to ``request.base_url`` with its headers."""
        _check_id(request.provider_id)
        if request.api_type != OPENAI:
            raise InvalidParams(f"provider {MAIN} speaks only {OPENAI}, not {request.api_type!r}")
        _check_url(request.base_url)
        self._routes[owner] = _routed(self.default, request)

    def disable_provider(self, owner: str | None, provider_id: str) -> None:
        """Drop ``owner``'s routing of ``main`` (the default model is used again)."""
        _check_id(provider_id)
        self._routes.pop(owner, None)


def _routed(default: ChatModel, request: SetProvidersRequest) -> ChatModel:
    from acp2.coder.providers.openai import OpenAIConfig, OpenAIModel

    key, headers = None, []
    for name, value in request.headers.items():
        if name.lower() == "authorization" and value.lower().startswith("bearer "):
            key = value[len("bearer ") :].strip() or None
        else:
            headers.append((name, value))
    config = getattr(default, "config", None)
    base = config if isinstance(config, OpenAIConfig) else OpenAIConfig()
    routed = replace(base, base_url=request.base_url, api_key=key, headers=tuple(headers))
    return OpenAIModel(routed)


def _base_url(model: ChatModel) -> str | None:
    url = getattr(getattr(model, "config", None), "base_url", None)
    return url if isinstance(url, str) else None


def _check_id(provider_id: str) -> None:
    if provider_id != MAIN:
        raise InvalidParams(f"unknown provider {provider_id!r}: this agent has {MAIN!r}")


def _check_url(url: str) -> None:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise InvalidParams("baseUrl must be an http or https URL")

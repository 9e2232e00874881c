"""The configuration of an agent, as the runtime reads it: :class:`AgentSettings`.

:class:`acp2.agent.Agent` is this plus the author's decorators and the entry points that
serve it; the runtime modules depend on the settings only, so they never import the
module that imports them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from acp2.agent.mcp import McpOptions
    from acp2.agent.providers import ProviderHost
    from acp2.agent.session import AgentSession
    from acp2.agent.session_hub import AttachPolicy
    from acp2.agent.turn import Turn
    from acp2.schema import AvailableCommand, SessionConfigOption
    from acp2.store.base import StoreSpec

__all__ = ["AgentSettings", "AuthMethodSpec", "PromptHandler"]

PromptHandler = Callable[["Turn"], Awaitable[str | None]]


@dataclass
class AuthMethodSpec:
    """An auth method: ``login`` is awaited on ``auth/login``.

    With ``terminal_args`` set it is advertised as a ``terminal`` method (the client runs
    the agent again with these arguments appended, in a terminal; AU-06), and only to
    clients that can run one (AU-05); else as an ``agent`` method. ``ready`` says, once
    per connection at its start, whether the user is signed in already (a key stored by
    an earlier terminal login): then no ``auth/login`` is needed.
    """

    method_id: str
    name: str
    login: Callable[[], Awaitable[None]]
    description: str | None = None
    terminal_args: list[str] | None = None
    ready: Callable[[], bool] | None = None


@dataclass(eq=False)
class AgentSettings:
    """The fields of an :class:`~acp2.agent.Agent` (see there for what each means).

    Configuration only: the runtime keeps its state elsewhere (:mod:`acp2.agent.runtime`).
    Compares by identity.
    """

    name: str
    version: str = "0.0.0"
    title: str | None = None
    prompt_image: bool = False
    prompt_audio: bool = False
    prompt_embedded_context: bool = True
    mcp_stdio: bool = False
    mcp_http: bool = False
    mcp_options: McpOptions | None = None
    additional_directories: bool = True
    delete: bool = True
    store: StoreSpec = None
    list_page_size: int = 50
    commands: Sequence[AvailableCommand] = ()
    config_options: Callable[[AgentSession], list[SessionConfigOption]] | None = None
    on_config_change: Callable[[AgentSession, str, Any], Awaitable[None]] | None = None
    auth_methods: list[AuthMethodSpec] = field(default_factory=list)
    prompt_handler: PromptHandler | None = None
    ext_requests: dict[str, Callable[[Any], Awaitable[Any]]] = field(default_factory=dict)
    ext_notifications: dict[str, Callable[[Any], Awaitable[None]]] = field(default_factory=dict)
    on_session_start: Callable[[AgentSession], Awaitable[None]] | None = None
    attach: bool = True
    mcp_acp: bool = False
    mcp_sse: bool = False
    fork: bool = True
    archive: bool = True
    set_title: bool = True
    on_fork: Callable[[dict[str, Any], AgentSession], Awaitable[None]] | None = None
    providers: ProviderHost | None = None
    system_prompt: bool = False
    steer: bool = False
    may_attach: AttachPolicy | None = None
    observers: Mapping[str, Collection[str]] = field(default_factory=dict)

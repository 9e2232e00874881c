"""What the agent advertises in ``initialize``, and the prompt-content check it implies."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from acp2.errors import InvalidParams
from acp2.lifecycle.prompt_content import PromptTakes, plain, refusal
from acp2.schema import (
    AgentCapabilities,
    AuthMethodAgent,
    AuthMethodTerminal,
    Implementation,
    InitializeResponse,
    McpAcpCapabilities,
    McpCapabilities,
    McpHttpCapabilities,
    McpSseCapabilities,
    McpStdioCapabilities,
    PromptAudioCapabilities,
    PromptCapabilities,
    PromptEmbeddedContextCapabilities,
    PromptImageCapabilities,
    ProvidersCapabilities,
    SessionAdditionalDirectoriesCapabilities,
    SessionArchiveCapabilities,
    SessionCapabilities,
    SessionDeleteCapabilities,
    SessionForkCapabilities,
    SessionSystemPromptCapabilities,
    SessionSystemPromptModeCapabilities,
    SessionSystemPromptOverrideCapabilities,
    SessionTitleCapabilities,
)
from acp2.schema.extensions import (
    META_KEY,
    attach_capability,
    memory_store_meta,
    steer_capability,
)

if TYPE_CHECKING:
    from acp2.agent.settings import AgentSettings as Agent

__all__ = ["PROTOCOL_VERSION", "build_initialize_response", "check_prompt", "runs_terminal_login"]

#: The only protocol version acp2 speaks.
PROTOCOL_VERSION = 2


def build_initialize_response(agent: Agent, *, terminal_auth: bool = True) -> InitializeResponse:
    """Build the ``initialize`` result from the agent's configuration (IN-03, IN-09).

    The version is always 2: a v2 agent answers its newest version whatever was asked
    (Aug IN-04), so a client asking for 1 or 65535 still gets a usable answer.
    Terminal auth methods are left out unless ``terminal_auth`` (the client can run
    them, AU-05).
    """
    info = Implementation(name=agent.name, version=agent.version)
    if agent.title is not None:
        info.title = agent.title
    response = InitializeResponse(
        protocol_version=PROTOCOL_VERSION,
        info=info,
        capabilities=AgentCapabilities(session=_session_capabilities(agent)),
    )
    if agent.providers is not None:  # Preview (unstable): an extra key every draft allows
        response.capabilities.providers = ProvidersCapabilities()
    methods = [m for m in agent.auth_methods if terminal_auth or m.terminal_args is None]
    if methods:
        response.auth_methods = [_auth_method(m) for m in methods]
    return response


def runs_terminal_login(params: Any) -> bool:
    """Whether the ``initialize`` params say the client can run a terminal login (AU-05)."""
    from acp2.schema.capabilities import TerminalAuthCapabilities

    auth = getattr(params.capabilities, "auth", None)
    return isinstance(getattr(auth, "terminal", None), TerminalAuthCapabilities)


def _mcp_capabilities(agent: Agent) -> McpCapabilities:
    mcp = McpCapabilities()
    if agent.mcp_stdio:
        mcp.stdio = McpStdioCapabilities()
    if agent.mcp_http:
        mcp.http = McpHttpCapabilities()
    if agent.mcp_acp:
        mcp.acp = McpAcpCapabilities()
    if agent.mcp_sse:
        mcp.sse = McpSseCapabilities()
    return mcp


def _prompt_capabilities(agent: Agent) -> PromptCapabilities:
    prompt = PromptCapabilities()
    if agent.prompt_image:
        prompt.image = PromptImageCapabilities()
    if agent.prompt_audio:
        prompt.audio = PromptAudioCapabilities()
    if agent.prompt_embedded_context:
        prompt.embedded_context = PromptEmbeddedContextCapabilities()
    return prompt


def _session_capabilities(agent: Agent) -> SessionCapabilities:
    session = SessionCapabilities(prompt=_prompt_capabilities(agent), mcp=_mcp_capabilities(agent))
    if agent.delete:
        session.delete = SessionDeleteCapabilities()
    if agent.additional_directories:
        session.additional_directories = SessionAdditionalDirectoriesCapabilities()
    _add_preview(agent, session)
    meta: dict[str, Any] = attach_capability()[META_KEY] if agent.attach else {}
    if _store_in_memory(agent.store):  # a client must not offer a resume that cannot work
        meta.update(memory_store_meta())
    if agent.steer:  # _acp2/session/steer (acp2.agent.steering)
        meta.update(steer_capability())
    if meta:
        session.meta = {META_KEY: meta}  # acp2's extensions (acp2.schema.extensions)
    return session


def _add_preview(agent: Agent, session: SessionCapabilities) -> None:
    """The Preview's unstable session capabilities: extra keys every draft allows."""
    if agent.fork:
        session.fork = SessionForkCapabilities()
    if agent.archive:
        session.archive = SessionArchiveCapabilities()
    if agent.set_title:
        session.title = SessionTitleCapabilities()
    if agent.system_prompt:  # append and override (acp2.agent.system_prompt)
        override = SessionSystemPromptModeCapabilities(
            override=SessionSystemPromptOverrideCapabilities()
        )
        session.system_prompt = SessionSystemPromptCapabilities(mode=override)


def _store_in_memory(store: Any) -> bool:
    """True for a store that ends with the process (``":memory:"``, as text or a store)."""
    path = store if isinstance(store, str) else getattr(store, "path", None)
    return isinstance(path, str) and path in (":memory:", "")


def _auth_method(spec: Any) -> AuthMethodAgent | AuthMethodTerminal:
    if spec.terminal_args is not None:
        terminal = AuthMethodTerminal(
            method_id=spec.method_id, name=spec.name, args=list(spec.terminal_args)
        )
        if spec.description is not None:
            terminal.description = spec.description
        return terminal
    method = AuthMethodAgent(method_id=spec.method_id, name=spec.name)
    if spec.description is not None:
        method.description = spec.description
    return method


def check_prompt(agent: Agent, prompt: Sequence[Any]) -> None:
    """Reject (``-32602``) an empty prompt or content the agent did not advertise (PL-02,
    :func:`acp2.lifecycle.prompt_content.refusal`)."""
    if plain(prompt):
        return
    takes = PromptTakes(agent.prompt_image, agent.prompt_audio, agent.prompt_embedded_context)
    why = refusal(takes, prompt)
    if why is not None:
        raise InvalidParams(why)

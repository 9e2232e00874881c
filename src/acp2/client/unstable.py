"""Checks for the Preview's unstable requests acp2's client sends (fork, title, providers).

Each is sent only to an agent that advertised its capability (``session.fork``,
``session.title``, ``providers``); otherwise the call raises
:class:`~acp2.errors.LocalProtocolError` and sends nothing, so a peer that does not know
the method never sees it.
"""

from __future__ import annotations

from acp2.client.checks import session_capabilities
from acp2.errors import LocalProtocolError
from acp2.schema import AgentCapabilities, SystemPrompt, supports

__all__ = [
    "check_archive",
    "check_fork",
    "check_providers",
    "check_system_prompt",
    "check_title",
    "supports_fork",
    "supports_providers",
    "supports_title",
]


def supports_fork(caps: AgentCapabilities) -> bool:
    """Whether the agent advertised ``session.fork`` (False without session support)."""
    return _advertised(caps, "fork")


def supports_title(caps: AgentCapabilities) -> bool:
    """Whether the agent advertised ``session.title`` (False without session support)."""
    return _advertised(caps, "title")


def check_fork(caps: AgentCapabilities) -> None:
    """Refuse ``session/fork`` unless ``session.fork`` is advertised."""
    if not supports_fork(caps):
        raise LocalProtocolError("The agent does not advertise session.fork")


def check_archive(caps: AgentCapabilities) -> None:
    """Refuse ``session/archive`` / ``session/unarchive`` unless ``session.archive`` is
    advertised."""
    if not _advertised(caps, "archive"):
        raise LocalProtocolError("The agent does not advertise session.archive")


def check_title(caps: AgentCapabilities) -> None:
    """Refuse ``session/set_title`` unless ``session.title`` is advertised."""
    if not supports_title(caps):
        raise LocalProtocolError("The agent does not advertise session.title")


def supports_providers(caps: AgentCapabilities) -> bool:
    """Whether the agent advertised ``providers`` (the custom LLM endpoint RFD)."""
    return supports(getattr(caps, "providers", None))


def check_providers(caps: AgentCapabilities) -> None:
    """Refuse ``providers/*`` unless ``providers`` is advertised."""
    if not supports_providers(caps):
        raise LocalProtocolError("The agent does not advertise providers")


def check_system_prompt(caps: AgentCapabilities, prompt: SystemPrompt) -> None:
    """Refuse a ``systemPrompt`` the agent did not advertise: any without
    ``session.systemPrompt``, ``override`` without ``session.systemPrompt.mode.override``,
    any other mode."""
    advertised = getattr(session_capabilities(caps), "system_prompt", None)
    if not supports(advertised):
        raise LocalProtocolError("The agent does not advertise session.systemPrompt")
    if prompt.mode == "override":
        if not supports(getattr(getattr(advertised, "mode", None), "override", None)):
            raise LocalProtocolError("The agent does not advertise systemPrompt override")
    elif prompt.mode != "append":
        raise LocalProtocolError(f"Unknown systemPrompt mode: {prompt.mode!r}")


def _advertised(caps: AgentCapabilities, name: str) -> bool:
    try:
        session = session_capabilities(caps)
    except LocalProtocolError:
        return False
    return supports(getattr(session, name, None))

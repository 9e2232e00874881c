"""Which client methods an agent serves, decided from its settings alone.

The agent runtime registers its handlers from the method table
(:func:`acp2.rpc.handlers.register`): every client method is either served or listed here
as unhandled (answered ``-32601``). :func:`unhandled` is that list for one agent's
settings, and :func:`check_advertised` refuses, with :class:`~acp2.errors.MissingHandler`,
an agent whose ``initialize`` result would advertise one of those methods. It runs when
:meth:`acp2.agent.Agent.run` starts -- before an ``initialize`` is answered early from
stdin -- and again as each connection registers its handlers. Cheap to import (no event
loop, no runtime): the early ``initialize`` path loads it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from acp2.agent.capabilities import build_initialize_response
from acp2.errors import MissingHandler
from acp2.schema.capability_methods import AGENT, promised
from acp2.schema.extensions import SESSION_ATTACH, SESSION_STEER
from acp2.schema.methods import (
    AUTH_LOGIN,
    AUTH_LOGOUT,
    AUTH_STATUS,
    MCP_MESSAGE,
    PROVIDERS_DISABLE,
    PROVIDERS_LIST,
    PROVIDERS_SET,
    SESSION_ARCHIVE,
    SESSION_DELETE,
    SESSION_FORK,
    SESSION_SET_TITLE,
    SESSION_UNARCHIVE,
    MethodSpec,
)

if TYPE_CHECKING:
    from acp2.agent.settings import AgentSettings as Agent

__all__ = ["NOT_SERVED", "advertised", "check_advertised", "unhandled"]

#: The client's unstable methods; fork and set_title (:mod:`acp2.agent.forking`) and the
#: providers methods (:mod:`acp2.agent.providers`) are served when the agent's settings
#: turn them on, the others never.
NOT_SERVED: Final[tuple[MethodSpec[Any, Any], ...]] = (
    SESSION_FORK,
    SESSION_ARCHIVE,
    SESSION_UNARCHIVE,
    SESSION_SET_TITLE,
    AUTH_STATUS,
    PROVIDERS_LIST,
    PROVIDERS_SET,
    PROVIDERS_DISABLE,
)


def unhandled(agent: Agent) -> list[MethodSpec[Any, Any]]:
    """The client's methods ``agent`` leaves to ``-32601`` on purpose: :data:`NOT_SERVED`
    and those its settings turn off (auth without auth methods, delete, attach, MCP over
    ACP)."""
    off = list(NOT_SERVED)
    if not agent.auth_methods:
        off += (AUTH_LOGIN, AUTH_LOGOUT)
    if not agent.delete:
        off.append(SESSION_DELETE)
    if not agent.attach:
        off.append(SESSION_ATTACH)
    if not agent.mcp_acp:
        off.append(MCP_MESSAGE)
    if not agent.steer:
        off.append(SESSION_STEER)
    return [spec for spec in off if not _turned_on(agent, spec)]


def _turned_on(agent: Agent, spec: MethodSpec[Any, Any]) -> bool:
    """Whether the agent's settings serve one of the :data:`NOT_SERVED` methods."""
    if spec in (PROVIDERS_LIST, PROVIDERS_SET, PROVIDERS_DISABLE):
        return agent.providers is not None
    if spec in (SESSION_ARCHIVE, SESSION_UNARCHIVE):
        return agent.archive
    return (spec is SESSION_FORK and agent.fork) or (spec is SESSION_SET_TITLE and agent.set_title)


def advertised(agent: Agent) -> frozenset[MethodSpec[Any, Any]]:
    """The methods ``agent``'s ``initialize`` result promises to serve."""
    return promised(build_initialize_response(agent), AGENT)


def check_advertised(agent: Agent) -> None:
    """Raise :class:`~acp2.errors.MissingHandler` when ``agent`` would advertise a method
    it leaves unhandled (the message names each)."""
    off = {spec.name for spec in unhandled(agent)}
    missing = sorted(spec.name for spec in advertised(agent) if spec.name in off)
    if missing:
        raise MissingHandler("agent advertises methods it does not serve: " + ", ".join(missing))

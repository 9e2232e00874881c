"""Local refusals: what a client must not send unless the agent advertised it.

Every check raises :class:`acp2.errors.LocalProtocolError` *before* anything is sent, so
a refused call leaves the connection and the session untouched. Capability markers are
tested by presence (:func:`acp2.schema.supports`: ``{}`` means supported), never by
truthiness (IN-07).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, Final

from msgspec import UNSET

from acp2.errors import LocalProtocolError
from acp2.lifecycle.prompt_content import PromptTakes, plain, refusal
from acp2.schema import (
    AgentCapabilities,
    AuthMethodAgent,
    AuthMethodTerminal,
    McpServerAcp,
    McpServerHttp,
    McpServerSse,
    McpServerStdio,
    SessionCapabilities,
    supports,
)

__all__ = [
    "PROTOCOL_VERSION",
    "check_absolute",
    "check_auth_method",
    "check_delete",
    "check_directories",
    "check_mcp_servers",
    "check_prompt",
    "session_capabilities",
    "transport_of",
]

#: The only protocol version acp2 speaks.
PROTOCOL_VERSION: Final = 2


def _get(obj: Any, name: str) -> Any:
    """``obj.name`` when ``obj`` is a present marker object, else None."""
    return getattr(obj, name, None) if supports(obj) else None


def session_capabilities(caps: AgentCapabilities) -> SessionCapabilities:
    """Return ``caps.session``; raise when the agent has no session support (IN-09)."""
    session = caps.session
    if not supports(session):
        raise LocalProtocolError("The agent does not advertise session support")
    assert isinstance(session, SessionCapabilities)
    return session


def check_absolute(path: str, what: str = "cwd") -> str:
    """Return ``path`` when it is absolute; raise otherwise (SS-05)."""
    if not os.path.isabs(path):
        raise LocalProtocolError(f"{what} must be an absolute path: {path!r}")
    return path


def check_prompt(caps: AgentCapabilities, blocks: Sequence[Any]) -> None:
    """Refuse an empty prompt or a block type the agent did not advertise (PL-02, D-10).

    ``text`` and ``resource_link`` are always allowed; ``image``, ``audio`` and
    ``resource`` need ``session.prompt.image`` / ``.audio`` / ``.embeddedContext``.
    Unknown block types are never advertised, so they are refused too
    (:func:`acp2.lifecycle.prompt_content.refusal`).
    """
    session = session_capabilities(caps)  # no session support: nothing to prompt
    if plain(blocks):  # text and links only: no marker needed
        return
    why = refusal(PromptTakes.of(_get(session, "prompt")), blocks)
    if why is not None:
        raise LocalProtocolError(why)


def check_directories(caps: AgentCapabilities, directories: Sequence[str] | None) -> None:
    """Refuse ``additionalDirectories`` unless advertised; every entry absolute (SS-05, SS-06)."""
    if directories is None:
        return
    if not supports(_get(session_capabilities(caps), "additional_directories")):
        raise LocalProtocolError("The agent does not advertise session.additionalDirectories")
    for path in directories:
        check_absolute(path, "each additional directory")


def check_mcp_servers(caps: AgentCapabilities, servers: Sequence[Any] | None) -> None:
    """Refuse an MCP server whose transport the agent did not advertise (SS-08)."""
    if not servers:
        return
    mcp = _get(session_capabilities(caps), "mcp")
    for server in servers:
        if isinstance(server, McpServerStdio):
            if not supports(_get(mcp, "stdio")):
                raise LocalProtocolError("The agent does not advertise session.mcp.stdio")
            check_absolute(server.command, "a stdio MCP server's command")
        elif isinstance(server, McpServerHttp | McpServerAcp | McpServerSse):
            kind = transport_of(server)
            if not supports(_get(mcp, kind)):
                raise LocalProtocolError(f"The agent does not advertise session.mcp.{kind}")
        else:
            raise LocalProtocolError("The agent did not advertise this MCP server transport")


def transport_of(server: Any) -> str:
    """The transport (wire ``type``) of an MCP server configuration, ``"unknown"`` for
    one acp2 does not model."""
    for kind, model in _TRANSPORTS:
        if isinstance(server, model):
            return kind
    return "unknown"


_TRANSPORTS = (
    ("stdio", McpServerStdio),
    ("http", McpServerHttp),
    ("acp", McpServerAcp),
    ("sse", McpServerSse),
)


def check_delete(caps: AgentCapabilities) -> None:
    """Refuse ``session/delete`` unless ``session.delete`` is advertised (SS-23)."""
    if not supports(_get(session_capabilities(caps), "delete")):
        raise LocalProtocolError("The agent does not advertise session.delete")


def check_auth_method(methods: Sequence[Any] | Any, method_id: str | None) -> None:
    """Refuse ``auth/*`` without advertised methods (AU-02), and ``auth/login`` with a
    method that is unknown or not an ``agent`` method (AU-04). ``method_id=None`` checks
    only that some method is advertised (``auth/logout``)."""
    if methods is UNSET or not methods:
        raise LocalProtocolError("The agent advertises no authMethods; auth/* is not allowed")
    if method_id is None:
        return
    for method in methods:
        if isinstance(method, AuthMethodAgent) and method.method_id == method_id:
            return
        if isinstance(method, AuthMethodTerminal) and method.method_id == method_id:
            raise LocalProtocolError(
                f"{method_id!r} is a terminal auth method: run the agent in a terminal "
                "instead of sending auth/login"
            )
    raise LocalProtocolError(f"The agent does not advertise the auth method {method_id!r}")

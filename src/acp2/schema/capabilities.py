"""Capabilities exchanged by ``initialize`` (IN-07..IN-14).

Support markers are objects: present and not ``None`` (even ``{}``, which is falsy in
Python) means supported; ``UNSET`` or ``None`` means unsupported. Test with
``is not None and is not UNSET`` -- see :func:`supports` -- never with truthiness.
Every capability field is lenient: a malformed value reads as absent (IN-16).

The unstable capabilities of the Preview (``providers``, ``auth.status``, and
``session.fork`` / ``archive`` / ``status`` / ``title`` / ``systemPrompt``) are modelled
from the Rust schema crate's v2 types (docs.rs ``agent-client-protocol-schema`` 1.15 to
1.22: ``ProvidersCapabilities``, ``AuthStatusCapabilities``, ``SessionForkCapabilities``,
``SessionArchiveCapabilities``, ``SessionStatusCapabilities``,
``SessionTitleCapabilities``, ``SessionSystemPromptCapabilities``) and the RFD pages
``rfds/custom-llm-endpoint``, ``rfds/session-fork``, ``rfds/session-set-title`` and
``rfds/client-system-prompt``. No vendored schema has them. They default to ``UNSET``, so
acp2 never advertises one it does not implement.
"""

from __future__ import annotations

from typing import Annotated, Any, TypeAlias

import msgspec
from msgspec import UNSET, UnsetType

from acp2.schema._base import LENIENT, Model
from acp2.schema.common import MetaField

__all__ = [
    "AgentAuthCapabilities",
    "AgentCapabilities",
    "AuthCapabilities",
    "AuthStatusCapabilities",
    "ClientAuthCapabilities",
    "ClientCapabilities",
    "ElicitationCapabilities",
    "ElicitationFormCapabilities",
    "ElicitationUrlCapabilities",
    "McpAcpCapabilities",
    "McpCapabilities",
    "McpHttpCapabilities",
    "McpSseCapabilities",
    "McpStdioCapabilities",
    "PromptAudioCapabilities",
    "PromptCapabilities",
    "PromptEmbeddedContextCapabilities",
    "PromptImageCapabilities",
    "ProvidersCapabilities",
    "SessionAdditionalDirectoriesCapabilities",
    "SessionArchiveCapabilities",
    "SessionCapabilities",
    "SessionDeleteCapabilities",
    "SessionForkCapabilities",
    "SessionStatusCapabilities",
    "SessionSystemPromptCapabilities",
    "SessionSystemPromptModeCapabilities",
    "SessionSystemPromptOverrideCapabilities",
    "SessionTitleCapabilities",
    "TerminalAuthCapabilities",
    "supports",
]


def supports(marker: Any) -> bool:
    """Whether a capability marker advertises support: present and not ``null`` (IN-07)."""
    return marker is not None and marker is not UNSET


class _Marker(Model, gc=False, kw_only=True):
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class PromptImageCapabilities(_Marker, kw_only=True):
    """Marker: the agent accepts ``image`` prompt blocks."""


class PromptAudioCapabilities(_Marker, kw_only=True):
    """Marker: the agent accepts ``audio`` prompt blocks."""


class PromptEmbeddedContextCapabilities(_Marker, kw_only=True):
    """Marker: the agent accepts ``resource`` (embedded) prompt blocks."""


class McpStdioCapabilities(_Marker, kw_only=True):
    """Marker: the agent can run stdio MCP servers."""


class McpHttpCapabilities(_Marker, kw_only=True):
    """Marker: the agent can connect to HTTP MCP servers."""


class McpAcpCapabilities(_Marker, kw_only=True):
    """Marker (unstable, MCP over ACP; Rust schema crate ``McpAcpCapabilities``): the agent
    reaches ``{type:"acp"}`` servers through ``mcp/connect`` on this connection."""


class McpSseCapabilities(_Marker, kw_only=True):
    """Marker (acp2's extension; v2 dropped the transport): the agent connects to
    ``{type:"sse"}`` MCP servers (v1's HTTP+SSE)."""


class SessionDeleteCapabilities(_Marker, kw_only=True):
    """Marker: the agent implements ``session/delete``."""


class SessionAdditionalDirectoriesCapabilities(_Marker, kw_only=True):
    """Marker: the agent accepts ``additionalDirectories`` on new / resume."""


class TerminalAuthCapabilities(_Marker, kw_only=True):
    """Marker: the client can run a terminal login (re-run the agent in a terminal)."""


class AuthStatusCapabilities(_Marker, kw_only=True):
    """Marker (unstable): the agent answers ``auth/status`` and may send
    ``auth/status_update``."""


class AgentAuthCapabilities(_Marker, kw_only=True):
    """The agent's ``auth`` capabilities: ``_meta`` (auth extensions) and, unstable,
    ``status``."""

    status: Annotated[AuthStatusCapabilities | UnsetType | None, LENIENT] = UNSET


class ProvidersCapabilities(_Marker, kw_only=True):
    """Marker (unstable): the agent implements the LLM provider configuration methods of
    the custom LLM endpoint RFD (``providers/list``, ``providers/set``,
    ``providers/disable``: :mod:`acp2.schema.providers`)."""


class SessionForkCapabilities(_Marker, kw_only=True):
    """Marker (unstable): the agent implements ``session/fork``."""


class SessionArchiveCapabilities(_Marker, kw_only=True):
    """Marker (unstable): the agent implements ``session/archive`` and
    ``session/unarchive``."""


class SessionStatusCapabilities(_Marker, kw_only=True):
    """Marker (unstable): the agent implements ``session/status``, whose shapes are not
    published yet, so acp2 has no method entry for it."""


class SessionTitleCapabilities(_Marker, kw_only=True):
    """Marker (unstable): the agent implements ``session/set_title``; titles the agent
    reports (``session/list``, ``session_info_update``) need no capability."""


class SessionSystemPromptOverrideCapabilities(_Marker, kw_only=True):
    """Marker (unstable): the agent accepts a system prompt in ``override`` mode."""


class SessionSystemPromptModeCapabilities(Model, gc=False, kw_only=True):
    """The system prompt modes an agent accepts besides ``append`` (unstable)."""

    override: Annotated[SessionSystemPromptOverrideCapabilities | UnsetType | None, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class SessionSystemPromptCapabilities(Model, gc=False, kw_only=True):
    """Present (even ``{}``): the agent accepts ``systemPrompt`` on the session lifecycle
    requests in ``append`` mode; ``mode`` lists the other modes (unstable)."""

    mode: Annotated[SessionSystemPromptModeCapabilities | UnsetType | None, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class ElicitationFormCapabilities(_Marker, kw_only=True):
    """Marker: the client supports form-mode elicitation."""


class ElicitationUrlCapabilities(_Marker, kw_only=True):
    """Marker: the client supports URL-mode elicitation."""


class PromptCapabilities(Model, gc=False, kw_only=True):
    """Which optional prompt block types the agent accepts (text and links always are)."""

    image: Annotated[PromptImageCapabilities | UnsetType | None, LENIENT] = UNSET
    audio: Annotated[PromptAudioCapabilities | UnsetType | None, LENIENT] = UNSET
    embedded_context: Annotated[PromptEmbeddedContextCapabilities | UnsetType | None, LENIENT] = (
        UNSET
    )
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class McpCapabilities(Model, gc=False, kw_only=True):
    """Which MCP server transports the agent supports."""

    stdio: Annotated[McpStdioCapabilities | UnsetType | None, LENIENT] = UNSET
    http: Annotated[McpHttpCapabilities | UnsetType | None, LENIENT] = UNSET
    acp: Annotated[McpAcpCapabilities | UnsetType | None, LENIENT] = UNSET
    sse: Annotated[McpSseCapabilities | UnsetType | None, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class SessionCapabilities(Model, gc=False, kw_only=True):
    """The agent's session support; its presence commits to the baseline session methods."""

    prompt: Annotated[PromptCapabilities | UnsetType | None, LENIENT] = UNSET
    mcp: Annotated[McpCapabilities | UnsetType | None, LENIENT] = UNSET
    delete: Annotated[SessionDeleteCapabilities | UnsetType | None, LENIENT] = UNSET
    additional_directories: Annotated[
        SessionAdditionalDirectoriesCapabilities | UnsetType | None, LENIENT
    ] = UNSET
    system_prompt: Annotated[SessionSystemPromptCapabilities | UnsetType | None, LENIENT] = UNSET
    fork: Annotated[SessionForkCapabilities | UnsetType | None, LENIENT] = UNSET
    archive: Annotated[SessionArchiveCapabilities | UnsetType | None, LENIENT] = UNSET
    status: Annotated[SessionStatusCapabilities | UnsetType | None, LENIENT] = UNSET
    title: Annotated[SessionTitleCapabilities | UnsetType | None, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class AgentCapabilities(Model, gc=False, kw_only=True):
    """Capabilities an agent advertises in the ``initialize`` result."""

    auth: Annotated[AgentAuthCapabilities | UnsetType | None, LENIENT] = UNSET
    session: Annotated[SessionCapabilities | UnsetType | None, LENIENT] = UNSET
    providers: Annotated[ProvidersCapabilities | UnsetType | None, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class AuthCapabilities(Model, gc=False, kw_only=True):
    """The client's ``auth`` capabilities (Nov name: ``ClientAuthCapabilities``)."""

    terminal: Annotated[TerminalAuthCapabilities | UnsetType | None, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


#: Nov's name for :class:`AuthCapabilities` (same wire shape, D-07).
ClientAuthCapabilities: TypeAlias = AuthCapabilities


class ElicitationCapabilities(Model, gc=False, kw_only=True):
    """Which elicitation modes the client supports (each mode separately, IN-13)."""

    form: Annotated[ElicitationFormCapabilities | UnsetType | None, LENIENT] = UNSET
    url: Annotated[ElicitationUrlCapabilities | UnsetType | None, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class ClientCapabilities(Model, gc=False, kw_only=True):
    """Capabilities a client advertises in the ``initialize`` request."""

    auth: Annotated[AuthCapabilities | UnsetType | None, LENIENT] = UNSET
    elicitation: Annotated[ElicitationCapabilities | UnsetType | None, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")

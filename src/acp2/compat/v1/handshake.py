"""The ``initialize`` handshake across versions: params and results, both directions.

Run :mod:`acp2.compat.v1.negotiate` first to learn the peer's version from the raw
bytes; then, with the message decoded as v1, these functions translate it. An acp2 agent
serving a v1 client uses :func:`initialize_request_from_v1` and
:func:`initialize_result_to_v1`; an acp2 client driving a v1 agent uses
:func:`initialize_request_to_v1` and :func:`initialize_result_from_v1`. Losses are
counted in ``dropped`` (names in ``docs/v1-projection.md``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from msgspec import UNSET

import acp2.compat.v1.schema as v1
import acp2.schema as v2
import acp2.schema.methods as v2m
from acp2.compat.v1.convert import Drops, recode
from acp2.schema.capabilities import supports
from acp2.schema.extensions import META_KEY

__all__ = [
    "UNKNOWN_IMPLEMENTATION",
    "V1Sessions",
    "initialize_request_from_v1",
    "initialize_request_to_v1",
    "initialize_result_from_v1",
    "initialize_result_to_v1",
    "refused_by_bridge",
    "runs_terminal_login",
    "v1_sessions",
    "wants_boolean_options",
]

#: The ``info`` v2 requires, for a v1 peer that sent none.
UNKNOWN_IMPLEMENTATION: Final = v2.Implementation(name="unknown", version="unknown")

# -- a v1 client and a v2 agent -------------------------------------------------------


def runs_terminal_login(caps: Any) -> bool:
    """Whether v1 client capabilities offer terminal login: ``auth.terminal: true``, or
    the ``_meta`` key ``terminal-auth: true`` that v1 editors and the ACP registry's
    validator send."""
    if caps is UNSET or caps is None:
        return False
    if caps.auth is not UNSET and caps.auth.terminal is True:
        return True
    meta = caps.meta
    return isinstance(meta, dict) and meta.get("terminal-auth") is True


def initialize_request_from_v1(
    request: v1.InitializeRequest, dropped: Drops
) -> v2.InitializeRequest:
    """v1 ``initialize`` params as v2: ``clientInfo`` -> ``info`` (``unknown`` when absent),
    ``auth.terminal: true`` -> ``{}``, elicitation copied. The client's ``fs`` /
    ``terminal`` offer has no v2 use (``initialize.fs``, ``initialize.terminal``)."""
    caps = request.client_capabilities if request.client_capabilities is not UNSET else None
    v2caps = v2.ClientCapabilities()
    if caps is not None:
        if runs_terminal_login(caps):
            v2caps.auth = v2.AuthCapabilities(terminal=v2.TerminalAuthCapabilities())
        if caps.elicitation not in (UNSET, None):
            v2caps.elicitation = recode(caps.elicitation, v2.ElicitationCapabilities)
        if caps.fs is not UNSET and (caps.fs.read_text_file or caps.fs.write_text_file):
            dropped["initialize.fs"] += 1
        if caps.terminal is True:
            dropped["initialize.terminal"] += 1
    info = request.client_info
    return v2.InitializeRequest(
        protocol_version=2,
        info=recode(info, v2.Implementation)
        if info not in (UNSET, None)
        else UNKNOWN_IMPLEMENTATION,
        capabilities=v2caps,
        meta=request.meta,
    )


def wants_boolean_options(request: v1.InitializeRequest) -> bool:
    """Whether a v1 client advertised ``session.configOptions.boolean``."""
    caps = request.client_capabilities
    if caps is UNSET or caps.session in (UNSET, None):
        return False
    options = caps.session.config_options
    return options not in (UNSET, None) and supports(options.boolean)


def initialize_result_to_v1(
    result: v2.InitializeResponse, *, terminal_auth: bool, dropped: Drops
) -> v1.InitializeResponse:
    """A v2 ``initialize`` result as v1 (protocol version 1).

    ``session`` -> ``loadSession`` and ``sessionCapabilities {list, resume, close}`` (the
    v2 baseline), ``session.prompt`` / ``session.mcp`` markers -> booleans, ``sse``
    false; ``methodId`` -> ``id``; terminal auth methods only when the client has
    ``auth.terminal`` (``terminal_auth``), else ``auth_method.terminal``.
    """
    session = result.capabilities.session
    has_session = supports(session)
    prompt = session.prompt if has_session else None  # type: ignore[union-attr]
    mcp = session.mcp if has_session else None  # type: ignore[union-attr]
    methods = _auth_methods_to_v1(result.auth_methods, terminal_auth, dropped)
    caps = v1.AgentCapabilities(
        load_session=has_session,
        prompt_capabilities=v1.PromptCapabilities(
            image=supports(prompt) and supports(prompt.image),  # type: ignore[union-attr]
            audio=supports(prompt) and supports(prompt.audio),  # type: ignore[union-attr]
            embedded_context=supports(prompt) and supports(prompt.embedded_context),  # type: ignore[union-attr]
        ),
        mcp_capabilities=v1.McpCapabilities(
            http=supports(mcp) and supports(mcp.http),  # type: ignore[union-attr]
            sse=False,
        ),
        session_capabilities=_session_caps_to_v1(session) if has_session else UNSET,
        auth=v1.AgentAuthCapabilities(logout=v1.LogoutCapabilities()) if methods else UNSET,
    )
    return v1.InitializeResponse(
        protocol_version=1,
        agent_capabilities=caps,
        auth_methods=methods,
        agent_info=recode(result.info, v1.Implementation),
        meta=result.meta,
    )


def _session_caps_to_v1(session: Any) -> v1.SessionCapabilities:
    return v1.SessionCapabilities(
        list=v1.SessionListCapabilities(),
        resume=v1.SessionResumeCapabilities(),
        close=v1.SessionCloseCapabilities(),
        delete=v1.SessionDeleteCapabilities() if supports(session.delete) else UNSET,
        additional_directories=(
            v1.SessionAdditionalDirectoriesCapabilities()
            if supports(session.additional_directories)
            else UNSET
        ),
    )


def _auth_methods_to_v1(methods: Any, terminal_auth: bool, dropped: Drops) -> list[v1.AuthMethod]:
    out = []
    for method in methods if methods is not UNSET else []:
        if isinstance(method, v2.AuthMethodAgent):
            out.append(
                v1.AuthMethod(id=method.method_id, name=method.name, description=method.description)
            )
        elif isinstance(method, v2.AuthMethodTerminal) and terminal_auth:
            env = {e.name: e.value for e in method.env} if method.env is not UNSET else UNSET
            out.append(
                v1.AuthMethod(
                    id=method.method_id,
                    name=method.name,
                    type="terminal",
                    description=method.description,
                    args=method.args,
                    env=env,
                )
            )
        else:
            kind = "terminal" if isinstance(method, v2.AuthMethodTerminal) else "unknown"
            dropped[f"auth_method.{kind}"] += 1
    return out


# -- a v2 client and a v1 agent ----------------------------------------------------------


def initialize_request_to_v1(
    request: v2.InitializeRequest,
    *,
    read_files: bool = False,
    write_files: bool = False,
    terminals: bool = False,
) -> v1.InitializeRequest:
    """A v2 ``initialize`` as v1 (protocol version 1): ``info`` -> ``clientInfo``;
    ``fs`` / ``terminal`` advertised only as enabled by the caller; boolean config options
    and ``auth.terminal`` as the v2 capabilities say (booleans are v2 baseline);
    ``subagents: {}`` always (child sessions are v2 baseline: acp2's client handles them,
    :mod:`acp2.compat.v1.lift` lifts the v1 agent's announcements)."""
    caps = request.capabilities
    auth = caps.auth
    return v1.InitializeRequest(
        protocol_version=1,
        client_info=recode(request.info, v1.Implementation),
        client_capabilities=v1.ClientCapabilities(
            fs=v1.FileSystemCapabilities(read_text_file=read_files, write_text_file=write_files),
            terminal=terminals,
            session=v1.ClientSessionCapabilities(
                config_options=v1.SessionConfigOptionsCapabilities(
                    boolean=v1.BooleanConfigOptionCapabilities()
                )
            ),
            auth=v1.AuthCapabilities(terminal=supports(auth) and supports(auth.terminal)),  # type: ignore[union-attr]
            elicitation=(
                recode(caps.elicitation, v1.ElicitationCapabilities)
                if supports(caps.elicitation)
                else UNSET
            ),
            subagents={},
        ),
        meta=request.meta,
    )


#: The key under ``capabilities.session._meta["acp2"]`` that says which baseline session
#: methods a bridge in front of a v1 agent refuses or emulates (:meth:`V1Sessions.meta`).
V1_SESSIONS_KEY: Final = "v1Sessions"


@dataclass(frozen=True, slots=True)
class V1Sessions:
    """What a v1 agent's ``initialize`` result lets a bridge do with existing sessions.

    v2's ``capabilities.session`` promises ``session/list``, ``resume`` and ``close``
    (IN-09); a v1 agent promises each on its own. ``can_load``: ``loadSession``;
    ``can_resume`` / ``can_list`` / ``can_close``: ``sessionCapabilities.resume`` /
    ``.list`` / ``.close``. ``agent`` names the agent in refusals. A bridge forwards
    what the agent advertised, emulates resume through ``session/load`` (the replay
    withheld) and close as local forgetting, and refuses the rest locally
    (:meth:`refusal`); ``docs/v1-projection.md`` lists each.
    """

    agent: str
    can_load: bool = False
    can_resume: bool = False
    can_list: bool = False
    can_close: bool = False

    @property
    def resumes(self) -> bool:
        """Whether a v2 ``session/resume`` without a cursor can be served at all."""
        return self.can_resume or self.can_load

    def refused(self) -> list[str]:
        """The v2 baseline methods a bridge answers ``-32601`` without asking the agent."""
        out = [] if self.can_list else [v2m.SESSION_LIST.name]
        return out if self.resumes else [*out, v2m.SESSION_RESUME.name]

    def emulated(self) -> dict[str, str]:
        """The v2 baseline methods a bridge serves in its own way: ``session/resume`` ->
        ``"load"`` (v1 ``session/load``, the replay withheld), ``session/close`` ->
        ``"local"`` (the bridge forgets the session)."""
        out = {} if self.can_resume or not self.can_load else {v2m.SESSION_RESUME.name: "load"}
        return out if self.can_close else {**out, v2m.SESSION_CLOSE.name: "local"}

    def meta(self) -> dict[str, Any]:
        """``capabilities.session._meta`` telling a v2 client what is refused / emulated
        (empty when the agent advertised everything)."""
        said = {"refused": self.refused(), "emulated": self.emulated()}
        kept = {key: value for key, value in said.items() if value}
        return {META_KEY: {V1_SESSIONS_KEY: kept}} if kept else {}

    def refusal(self, method: str) -> str:
        """The message of the ``-32601`` refusing ``method`` (one of :meth:`refused`),
        naming the capability the v1 agent lacks."""
        lacks = (
            "sessionCapabilities.list"
            if method == v2m.SESSION_LIST.name
            else "loadSession or sessionCapabilities.resume"
        )
        agent = self.agent
        return f"{method} is not available: the ACP v1 agent {agent} does not advertise {lacks}"


def refused_by_bridge(session_capabilities: Any, method: str) -> bool:
    """True when a v2 agent's ``capabilities.session`` says it is a bridged v1 agent that
    refuses the baseline ``method`` (:meth:`V1Sessions.meta`); False when it says nothing."""
    meta = getattr(session_capabilities, "meta", None)
    ours = meta.get(META_KEY) if isinstance(meta, dict) else None
    said = ours.get(V1_SESSIONS_KEY) if isinstance(ours, dict) else None
    refused = said.get("refused") if isinstance(said, dict) else None
    return isinstance(refused, list) and method in refused


def v1_sessions(result: v1.InitializeResponse) -> V1Sessions:
    """Read :class:`V1Sessions` from a v1 agent's ``initialize`` result."""
    caps = result.agent_capabilities
    extra = caps.session_capabilities if caps is not UNSET else UNSET
    info = result.agent_info
    return V1Sessions(
        agent=info.name if info not in (UNSET, None) else "(unnamed)",
        can_load=caps is not UNSET and caps.load_session is True,
        can_resume=_has(extra, "resume"),
        can_list=_has(extra, "list"),
        can_close=_has(extra, "close"),
    )


def initialize_result_from_v1(result: v1.InitializeResponse) -> v2.InitializeResponse:
    """A v1 agent's ``initialize`` result as v2 (``protocolVersion`` kept as answered).

    ``session`` is always present: ``session/new`` and ``session/prompt`` are v1
    baseline. The rest of v2's baseline is kept only as :class:`V1Sessions` says:
    ``session._meta["acp2"]["v1Sessions"]`` lists the methods a bridge refuses
    (``refused``) and emulates (``emulated``). Prompt booleans -> markers, ``mcp.stdio``
    always (implicit in v1), ``mcp.http`` when true (``sse`` has no v2 form);
    ``agentInfo`` -> ``info`` (``unknown`` when absent); auth method ``id`` ->
    ``methodId``.
    """
    caps = result.agent_capabilities if result.agent_capabilities is not UNSET else None
    prompt = caps.prompt_capabilities if caps is not None else UNSET
    mcp = caps.mcp_capabilities if caps is not None else UNSET
    extra = caps.session_capabilities if caps is not None else UNSET
    session = v2.SessionCapabilities(
        prompt=v2.PromptCapabilities(
            image=_marker(prompt, "image", v2.PromptImageCapabilities),
            audio=_marker(prompt, "audio", v2.PromptAudioCapabilities),
            embedded_context=_marker(
                prompt, "embedded_context", v2.PromptEmbeddedContextCapabilities
            ),
        ),
        mcp=v2.McpCapabilities(
            stdio=v2.McpStdioCapabilities(), http=_marker(mcp, "http", v2.McpHttpCapabilities)
        ),
        delete=v2.SessionDeleteCapabilities() if _has(extra, "delete") else UNSET,
        additional_directories=(
            v2.SessionAdditionalDirectoriesCapabilities()
            if _has(extra, "additional_directories")
            else UNSET
        ),
        meta=v1_sessions(result).meta() or UNSET,
    )
    info = result.agent_info
    return v2.InitializeResponse(
        protocol_version=result.protocol_version,
        info=recode(info, v2.Implementation)
        if info not in (UNSET, None)
        else UNKNOWN_IMPLEMENTATION,
        capabilities=v2.AgentCapabilities(session=session),
        auth_methods=[_auth_method(m) for m in result.auth_methods or []] or UNSET,
        meta=result.meta,
    )


def _marker(holder: Any, name: str, cls: type) -> Any:
    return cls() if holder is not UNSET and getattr(holder, name) is True else UNSET


def _has(holder: Any, name: str) -> bool:
    return holder is not UNSET and supports(getattr(holder, name))


def _auth_method(method: v1.AuthMethod) -> Any:
    if method.is_terminal:
        env = method.env if method.env is not UNSET else {}
        return v2.AuthMethodTerminal(
            method_id=method.id,
            name=method.name,
            description=method.description,
            args=method.args,
            env=[v2.EnvVariable(name=k, value=v) for k, v in env.items()] or UNSET,
        )
    return v2.AuthMethodAgent(method_id=method.id, name=method.name, description=method.description)

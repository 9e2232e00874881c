"""An acp2 (v2) client driving a v1 agent: v2 requests out as v1, v1 answers in as v2.

Stateless functions, one per message shape; the per-session update stream and the
prompt lifecycle are :class:`acp2.compat.v1.lift.V1Lifter`. The v1 requests an agent
sends to the client (``fs/*``, ``terminal/*``) are decoded by :func:`decode_agent_request`;
serving them is the client runtime's job.
"""

from __future__ import annotations

from typing import Any, Final

import msgspec
from msgspec import UNSET

import acp2.compat.v1.schema as v1
import acp2.schema as v2
from acp2.compat.v1.convert import Drops, mcp_servers_to_v1, recode
from acp2.compat.v1.methods import AGENT_REQUESTS
from acp2.compat.v1.negotiate import INVALID_PARAMS
from acp2.schema.capabilities import supports
from acp2.schema.codec import decode

__all__ = [
    "InvalidParams",
    "decode_agent_request",
    "initialize_request_to_v1",
    "initialize_result_from_v1",
    "new_session_request_to_v1",
    "permission_request_from_v1",
    "permission_result_to_v1",
    "resume_request_to_v1",
]

_DEFAULT_PERMISSION_TITLE: Final = "Permission required"
_UNKNOWN: Final = v2.Implementation(name="unknown", version="unknown")


class InvalidParams(ValueError):
    """v1 request params that do not decode: answer ``-32602`` with ``str(error)``."""

    code: Final = INVALID_PARAMS


def initialize_request_to_v1(
    request: v2.InitializeRequest,
    *,
    read_files: bool = False,
    write_files: bool = False,
    terminals: bool = False,
) -> v1.InitializeRequest:
    """A v2 ``initialize`` as v1 (protocol version 1): ``info`` -> ``clientInfo``;
    ``fs`` / ``terminal`` advertised only as enabled by the caller; boolean config options
    and ``auth.terminal`` as the v2 capabilities say (booleans are v2 baseline)."""
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
        ),
        meta=request.meta,
    )


def initialize_result_from_v1(result: v1.InitializeResponse) -> v2.InitializeResponse:
    """A v1 agent's ``initialize`` result as v2 (``protocolVersion`` kept as answered).

    ``session`` is always present: ``session/new`` and ``session/prompt`` are v1
    baseline; whether resume can replay is the v1 ``loadSession`` flag, which the caller
    reads from the v1 result. Prompt booleans -> markers, ``mcp.stdio`` always (implicit
    in v1), ``mcp.http`` when true (``sse`` has no v2 form); ``agentInfo`` -> ``info``
    (``unknown`` when absent); auth method ``id`` -> ``methodId``.
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
    )
    info = result.agent_info
    return v2.InitializeResponse(
        protocol_version=result.protocol_version,
        info=recode(info, v2.Implementation) if info not in (UNSET, None) else _UNKNOWN,
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


def new_session_request_to_v1(
    request: v2.NewSessionRequest, dropped: Drops
) -> v1.NewSessionRequest:
    """v2 ``session/new`` params as v1 (``mcpServers`` always sent, stdio untyped)."""
    return v1.NewSessionRequest(
        cwd=request.cwd,
        additional_directories=request.additional_directories,
        mcp_servers=mcp_servers_to_v1(request.mcp_servers, dropped),
        meta=request.meta,
    )


def resume_request_to_v1(
    request: v2.ResumeSessionRequest, dropped: Drops
) -> v1.LoadSessionRequest | v1.ResumeSessionRequest:
    """v2 ``session/resume`` as v1: with ``replayFrom: start`` it is ``session/load``
    (v1 replays the whole history), without a cursor ``session/resume``. Any other
    cursor raises :class:`InvalidParams` (v1 has no cursors)."""
    servers = mcp_servers_to_v1(request.mcp_servers, dropped)
    replay = request.replay_from
    if isinstance(replay, v2.ReplayFromStart):
        return v1.LoadSessionRequest(
            session_id=request.session_id,
            cwd=request.cwd,
            additional_directories=request.additional_directories,
            mcp_servers=servers,
            meta=request.meta,
        )
    if replay not in (UNSET, None):
        raise InvalidParams("a v1 agent can only replay from the start")
    return v1.ResumeSessionRequest(
        session_id=request.session_id,
        cwd=request.cwd,
        additional_directories=request.additional_directories,
        mcp_servers=servers,
        meta=request.meta,
    )


def permission_request_from_v1(request: v1.RequestPermissionRequest) -> v2.RequestPermissionRequest:
    """A v1 permission request as v2: ``title`` from the tool call (or a default), the
    tool call as a ``tool_call`` subject. Its ``null`` fields mean "unchanged" in v1."""
    call = request.tool_call
    fields = {
        name: getattr(call, name)
        for name in ("title", "kind", "status", "raw_input", "raw_output", "meta")
        if getattr(call, name) not in (UNSET, None)
    }
    title = call.title if isinstance(call.title, str) else _DEFAULT_PERMISSION_TITLE
    subject = v2.ToolCallPermissionSubject(
        tool_call=v2.ToolCallFields(tool_call_id=call.tool_call_id, **fields)
    )
    return v2.RequestPermissionRequest(
        session_id=request.session_id,
        title=title,
        subject=subject,
        options=[recode(option, v2.PermissionOption) for option in request.options],
        meta=request.meta,
    )


def permission_result_to_v1(result: v2.RequestPermissionResponse) -> v1.RequestPermissionResponse:
    """A v2 permission answer as v1; an unknown v2 outcome is ``cancelled`` (never approval)."""
    outcome = result.outcome
    if isinstance(outcome, v2.SelectedPermissionOutcome):
        chosen: Any = v1.SelectedPermissionOutcome(option_id=outcome.option_id, meta=outcome.meta)
    else:
        chosen = v1.CancelledPermissionOutcome()
    return v1.RequestPermissionResponse(outcome=chosen, meta=result.meta)


def decode_agent_request(method: str, params: bytes | msgspec.Raw) -> Any:
    """Decode the params of a v1 ``fs/*`` or ``terminal/*`` request from an agent.

    Returns the v1 model (e.g. :class:`acp2.compat.v1.schema.ReadTextFileRequest`).
    Raises ``KeyError`` for a method that is not one of those, and
    :class:`InvalidParams` (``-32602``) for params that do not decode.
    """
    spec = AGENT_REQUESTS[method]
    try:
        return decode(params, spec.params_type)
    except msgspec.DecodeError as exc:  # ValidationError is a subclass
        raise InvalidParams(f"invalid {method} params: {exc}") from None

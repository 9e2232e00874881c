"""An acp2 (v2) client driving a v1 agent: v2 requests out as v1, v1 answers in as v2.

Stateless functions, one per message shape (``initialize`` is in
:mod:`acp2.compat.v1.handshake`); the per-session update stream and the
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
from acp2.compat.v1.tool_fields import tool_call_fields_from_v1
from acp2.errors import InvalidParams
from acp2.schema.codec import decode

__all__ = [
    "InvalidParams",
    "decode_agent_request",
    "new_session_request_to_v1",
    "permission_request_from_v1",
    "permission_result_to_v1",
    "reopening",
    "resume_request_to_v1",
]

_DEFAULT_PERMISSION_TITLE: Final = "Permission required"


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
        return v1.LoadSessionRequest(**reopening(request, servers))
    if replay not in (UNSET, None):
        raise InvalidParams("a v1 agent can only replay from the start")
    return v1.ResumeSessionRequest(**reopening(request, servers))


def reopening(request: Any, servers: list[Any]) -> dict[str, Any]:
    """The fields a v1 ``session/load`` and ``session/resume`` share, from a request
    that names a session (v2 ``session/resume`` or v1 ``session/resume``): the session,
    its roots, ``servers`` (already v1) and ``_meta``."""
    return {
        "session_id": request.session_id,
        "cwd": request.cwd,
        "additional_directories": request.additional_directories,
        "mcp_servers": servers,
        "meta": request.meta,
    }


def permission_request_from_v1(request: v1.RequestPermissionRequest) -> v2.RequestPermissionRequest:
    """A v1 permission request as v2: ``title`` from the tool call (or a default), the
    tool call as a ``tool_call`` subject carrying every field the v1 ``toolCall`` has
    (content -- diffs, text, terminals --, locations, title, kind, status, raw input and
    output, ``_meta``), so the client patches the call before it asks the person. Its
    ``null`` fields mean "unchanged" in v1 and are left out."""
    call = request.tool_call
    title = call.title if isinstance(call.title, str) else _DEFAULT_PERMISSION_TITLE
    subject = v2.ToolCallPermissionSubject(tool_call=tool_call_fields_from_v1(call))
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

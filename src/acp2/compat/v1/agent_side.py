"""An acp2 (v2) agent serving a v1 client: v1 requests in as v2, v2 answers out as v1.

Stateless functions, one per message shape (``initialize`` is in
:mod:`acp2.compat.v1.handshake`); the per-session update stream is
:class:`acp2.compat.v1.project.V1Projector`. What v1 cannot carry is counted in the
``dropped`` counter passed in (names in ``docs/v1-projection.md``).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from msgspec import UNSET, UnsetType

import acp2.compat.v1.schema as v1
import acp2.schema as v2
from acp2.compat.v1.convert import (
    Drops,
    blocks_from_v1,
    config_options_to_v1,
    mcp_servers_from_v1,
)
from acp2.errors import InternalError, PromptFailed

__all__ = [
    "PromptFailed",
    "cancel_from_v1",
    "load_request_from_v1",
    "mode_option",
    "new_session_request_from_v1",
    "new_session_result_to_v1",
    "permission_result_from_v1",
    "prompt_request_from_v1",
    "prompt_result_to_v1",
    "resume_request_from_v1",
    "resume_result_to_v1",
    "set_config_option_from_v1",
    "set_config_option_result_to_v1",
    "set_mode_from_v1",
]


# -- sessions ---------------------------------------------------------------------------


def new_session_request_from_v1(
    request: v1.NewSessionRequest, dropped: Drops
) -> v2.NewSessionRequest:
    """v1 ``session/new`` params as v2 (``sse`` MCP servers: ``mcp_server.sse``)."""
    return v2.NewSessionRequest(
        cwd=request.cwd,
        additional_directories=request.additional_directories,
        mcp_servers=mcp_servers_from_v1(request.mcp_servers, dropped),
        meta=request.meta,
    )


def load_request_from_v1(request: v1.LoadSessionRequest, dropped: Drops) -> v2.ResumeSessionRequest:
    """v1 ``session/load`` as v2 ``session/resume`` replaying from the start: the agent's
    replayed updates go through the projector, then the response is sent."""
    return v2.ResumeSessionRequest(
        session_id=request.session_id,
        cwd=request.cwd,
        additional_directories=request.additional_directories,
        mcp_servers=mcp_servers_from_v1(request.mcp_servers, dropped),
        replay_from=v2.ReplayFromStart(),
        meta=request.meta,
    )


def resume_request_from_v1(
    request: v1.ResumeSessionRequest, dropped: Drops
) -> v2.ResumeSessionRequest:
    """v1 ``session/resume`` as v2 ``session/resume`` without replay."""
    servers = request.mcp_servers if request.mcp_servers is not UNSET else []
    return v2.ResumeSessionRequest(
        session_id=request.session_id,
        cwd=request.cwd,
        additional_directories=request.additional_directories,
        mcp_servers=mcp_servers_from_v1(servers, dropped),
        meta=request.meta,
    )


def mode_option(options: Any) -> v2.SessionConfigSelect | None:
    """The config option a v1 client sees as its ``modes``: the first flat ``select``
    with ``category: "mode"``, or ``None``."""
    for option in options if isinstance(options, list) else []:
        if (
            isinstance(option, v2.SessionConfigSelect)
            and option.category == "mode"
            and not any(choice.is_group for choice in option.options)
        ):
            return option
    return None


def _modes(options: Any) -> v1.SessionModeState | UnsetType:
    option = mode_option(options)
    if option is None:
        return UNSET
    return v1.SessionModeState(
        current_mode_id=option.current_value,
        available_modes=[
            v1.SessionMode(id=str(choice.value), name=choice.name, description=choice.description)
            for choice in option.options
        ],
    )


def _options_to_v1(options: Any, booleans: bool, dropped: Drops) -> Any:
    if options is UNSET:
        return UNSET
    return config_options_to_v1(options, booleans=booleans, dropped=dropped)


def new_session_result_to_v1(
    result: v2.NewSessionResponse, *, booleans: bool, dropped: Drops
) -> v1.NewSessionResponse:
    """A v2 ``session/new`` result as v1: config options renamed, the ``mode`` option
    (see :func:`mode_option`) also offered as v1 ``modes``. The initial
    ``availableCommands`` have no v1 field: the agent's ``available_commands_update``
    carries them (``session.available_commands`` when the response had them)."""
    if result.available_commands is not UNSET:
        dropped["session.available_commands"] += 1
    return v1.NewSessionResponse(
        session_id=result.session_id,
        modes=_modes(result.config_options),
        config_options=_options_to_v1(result.config_options, booleans, dropped),
        meta=result.meta,
    )


def resume_result_to_v1(
    result: v2.ResumeSessionResponse, *, booleans: bool, dropped: Drops
) -> v1.LoadSessionResponse:
    """A v2 ``session/resume`` result as the v1 ``session/load`` (or ``session/resume``:
    the same shape) result."""
    if result.available_commands is not UNSET:
        dropped["session.available_commands"] += 1
    return v1.LoadSessionResponse(
        modes=_modes(result.config_options),
        config_options=_options_to_v1(result.config_options, booleans, dropped),
        meta=result.meta,
    )


def set_mode_from_v1(
    request: v1.SetSessionModeRequest, mode_config_id: str
) -> v2.SetSessionConfigOptionRequest:
    """v1 ``session/set_mode`` as v2 ``session/set_config_option`` on the mode option."""
    return v2.SetSessionConfigOptionRequest(
        session_id=request.session_id,
        config_id=mode_config_id,
        type="id",
        value=request.mode_id,
        meta=request.meta,
    )


def set_config_option_from_v1(
    request: v1.SetSessionConfigOptionRequest,
) -> v2.SetSessionConfigOptionRequest:
    """v1 ``session/set_config_option`` as v2: ``type`` is ``"boolean"`` or ``"id"``."""
    return v2.SetSessionConfigOptionRequest(
        session_id=request.session_id,
        config_id=request.config_id,
        type="boolean" if isinstance(request.value, bool) else "id",
        value=request.value,
        meta=request.meta,
    )


def set_config_option_result_to_v1(
    result: v2.SetSessionConfigOptionResponse, *, booleans: bool, dropped: Drops
) -> v1.SetSessionConfigOptionResponse:
    """A v2 ``session/set_config_option`` result as v1."""
    options = config_options_to_v1(result.config_options, booleans=booleans, dropped=dropped)
    return v1.SetSessionConfigOptionResponse(config_options=options, meta=result.meta)


# -- prompts, cancel, permission --------------------------------------------------------


def prompt_request_from_v1(request: v1.PromptRequest) -> v2.PromptRequest:
    """v1 ``session/prompt`` params as v2 (content blocks converted)."""
    return v2.PromptRequest(
        session_id=request.session_id, prompt=blocks_from_v1(request.prompt), meta=request.meta
    )


def prompt_result_to_v1(idle: v2.StateUpdate, dropped: Drops) -> v1.PromptResponse:
    """The answer to a held v1 prompt, from the v2 ``idle`` that ended its work.

    A v1 stop reason passes unchanged; ``error`` raises :class:`PromptFailed` (answer
    with its JSON-RPC error); a missing, custom or unknown reason becomes ``end_turn``
    (``stop_reason.missing`` / ``stop_reason.unknown``).
    """
    reason = idle.stop_reason
    if reason == "error":
        error = idle.error if isinstance(idle.error, v2.Error) else None
        failed = v2.Error(code=InternalError.code, message="the agent's turn failed")
        raise PromptFailed(error or failed)
    if not isinstance(reason, str):
        dropped["stop_reason.missing"] += 1
        reason = "end_turn"
    elif reason not in v1.STOP_REASONS:
        dropped["stop_reason.unknown"] += 1
        reason = "end_turn"
    return v1.PromptResponse(stop_reason=reason)


def cancel_from_v1(note: v1.CancelNotification) -> v2.CancelSessionNotification:
    """v1 ``session/cancel`` as v2 (the held prompt is then answered ``cancelled``)."""
    return v2.CancelSessionNotification(session_id=note.session_id, meta=note.meta)


def permission_result_from_v1(
    result: v1.RequestPermissionResponse, offered: Collection[str]
) -> v2.RequestPermissionResponse:
    """A v1 client's permission answer as v2: ``selected`` only for an offered option id;
    anything else (``cancelled``, unknown outcome, unknown id) is ``cancelled`` -- never
    approval (PR-08)."""
    outcome = result.outcome
    if isinstance(outcome, v1.SelectedPermissionOutcome) and outcome.option_id in offered:
        chosen: Any = v2.SelectedPermissionOutcome(option_id=outcome.option_id, meta=outcome.meta)
    else:
        chosen = v2.CancelledPermissionOutcome()
    return v2.RequestPermissionResponse(outcome=chosen, meta=result.meta)

"""The v1 method table: the one place where ACP v1 wire method names are written.

``METHODS[name]`` is a :class:`MethodSpec` (the v2 table's type): params / result types
for :func:`acp2.schema.codec.decode`, and ``sender`` -- ``"client"`` for client-to-agent
methods, ``"agent"`` for agent-to-client methods, ``"either"`` for ``$/cancel_request``.
``result_type`` is ``None`` for notifications. The names and directions follow the
vendored ``schemas/meta.json``; a test checks that they agree.
"""

from __future__ import annotations

from typing import Any, Final

from acp2.compat.v1.schema import client as c
from acp2.compat.v1.schema import elicitation as el
from acp2.compat.v1.schema import initialize as ini
from acp2.compat.v1.schema import jsonrpc as rpc
from acp2.compat.v1.schema import session as s
from acp2.compat.v1.schema import tools as t
from acp2.compat.v1.schema import updates as u
from acp2.compat.v1.schema.config import (
    SetSessionConfigOptionRequest,
    SetSessionConfigOptionResponse,
)
from acp2.schema.methods import MethodSpec, Sender

__all__ = ["METHODS", "MethodSpec"]


def _spec(name: str, params: Any, result: Any, sender: Sender) -> tuple[str, MethodSpec[Any, Any]]:
    return name, MethodSpec(name, params, result, sender)


#: Every ACP v1 method, keyed by wire name.
METHODS: Final[dict[str, MethodSpec[Any, Any]]] = dict(
    [
        # client -> agent
        _spec("initialize", ini.InitializeRequest, ini.InitializeResponse, "client"),
        _spec("authenticate", ini.AuthenticateRequest, ini.AuthenticateResponse, "client"),
        _spec("logout", ini.LogoutRequest, ini.LogoutResponse, "client"),
        _spec("session/new", s.NewSessionRequest, s.NewSessionResponse, "client"),
        _spec("session/load", s.LoadSessionRequest, s.LoadSessionResponse, "client"),
        _spec("session/list", s.ListSessionsRequest, s.ListSessionsResponse, "client"),
        _spec("session/resume", s.ResumeSessionRequest, s.ResumeSessionResponse, "client"),
        _spec("session/close", s.CloseSessionRequest, s.CloseSessionResponse, "client"),
        _spec("session/delete", s.DeleteSessionRequest, s.DeleteSessionResponse, "client"),
        _spec("session/set_mode", s.SetSessionModeRequest, s.SetSessionModeResponse, "client"),
        _spec(
            "session/set_config_option",
            SetSessionConfigOptionRequest,
            SetSessionConfigOptionResponse,
            "client",
        ),
        _spec("session/prompt", s.PromptRequest, s.PromptResponse, "client"),
        _spec("session/cancel", s.CancelNotification, None, "client"),
        # agent -> client
        _spec("session/update", u.SessionNotification, None, "agent"),
        _spec(
            "session/request_permission",
            t.RequestPermissionRequest,
            t.RequestPermissionResponse,
            "agent",
        ),
        _spec("fs/read_text_file", c.ReadTextFileRequest, c.ReadTextFileResponse, "agent"),
        _spec("fs/write_text_file", c.WriteTextFileRequest, c.WriteTextFileResponse, "agent"),
        _spec("terminal/create", c.CreateTerminalRequest, c.CreateTerminalResponse, "agent"),
        _spec("terminal/output", c.TerminalOutputRequest, c.TerminalOutputResponse, "agent"),
        _spec(
            "terminal/wait_for_exit",
            c.WaitForTerminalExitRequest,
            c.WaitForTerminalExitResponse,
            "agent",
        ),
        _spec("terminal/kill", c.KillTerminalRequest, c.KillTerminalResponse, "agent"),
        _spec("terminal/release", c.ReleaseTerminalRequest, c.ReleaseTerminalResponse, "agent"),
        _spec(
            "elicitation/create",
            el.CreateElicitationRequest,
            el.CreateElicitationResponse,
            "agent",
        ),
        _spec("elicitation/complete", el.CompleteElicitationNotification, None, "agent"),
        # either side
        _spec("$/cancel_request", rpc.CancelRequestNotification, None, "either"),
    ]
)

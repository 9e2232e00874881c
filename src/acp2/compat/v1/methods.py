"""The v1 method table: the one place where ACP v1 wire method names are written.

Each constant (``INITIALIZE``, ``SESSION_LOAD``, ``FS_READ_TEXT_FILE``, ...) is a typed
:class:`MethodSpec` built like the v2 table's (:mod:`acp2.schema.methods`), so
``conn.call(SESSION_PROMPT, params)`` is typed with the v1 models. ``METHODS[name]`` finds
one by wire name. ``sender`` is ``"client"`` for client-to-agent methods, ``"agent"`` for
agent-to-client methods, ``"either"`` for ``$/cancel_request``; ``result_type`` is ``None``
for notifications. The names and directions follow the vendored ``schemas/meta.json``; a
test checks that they agree.
"""

from __future__ import annotations

from typing import Any, Final, cast

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
from acp2.schema.methods import MethodSpec, notification, request

__all__ = [
    "AGENT_REQUESTS",
    "AUTHENTICATE",
    "CANCEL_REQUEST",
    "ELICITATION_COMPLETE",
    "ELICITATION_CREATE",
    "FS_READ_TEXT_FILE",
    "FS_WRITE_TEXT_FILE",
    "INITIALIZE",
    "LOGOUT",
    "METHODS",
    "SESSION_CANCEL",
    "SESSION_CLOSE",
    "SESSION_DELETE",
    "SESSION_LIST",
    "SESSION_LOAD",
    "SESSION_NEW",
    "SESSION_PROMPT",
    "SESSION_REQUEST_PERMISSION",
    "SESSION_RESUME",
    "SESSION_SET_CONFIG_OPTION",
    "SESSION_SET_MODE",
    "SESSION_UPDATE",
    "TERMINAL_CREATE",
    "TERMINAL_KILL",
    "TERMINAL_OUTPUT",
    "TERMINAL_RELEASE",
    "TERMINAL_WAIT_FOR_EXIT",
    "MethodSpec",
]

# -- client -> agent --------------------------------------------------------------------
INITIALIZE: Final = request(
    "initialize", ini.InitializeRequest, ini.InitializeResponse, "client", retry="safe"
)
AUTHENTICATE: Final = request(
    "authenticate", ini.AuthenticateRequest, ini.AuthenticateResponse, "client"
)
LOGOUT: Final = request("logout", ini.LogoutRequest, ini.LogoutResponse, "client")
SESSION_NEW: Final = request(
    "session/new", s.NewSessionRequest, s.NewSessionResponse, "client", joins=True
)
SESSION_LOAD: Final = request(
    "session/load",
    s.LoadSessionRequest,
    s.LoadSessionResponse,
    "client",
    session=True,
    joins=True,
)
SESSION_LIST: Final = request(
    "session/list", s.ListSessionsRequest, s.ListSessionsResponse, "client", retry="safe"
)
SESSION_RESUME: Final = request(
    "session/resume",
    s.ResumeSessionRequest,
    s.ResumeSessionResponse,
    "client",
    session=True,
    joins=True,
)
SESSION_CLOSE: Final = request(
    "session/close", s.CloseSessionRequest, s.CloseSessionResponse, "client", session=True
)
SESSION_DELETE: Final = request(
    "session/delete", s.DeleteSessionRequest, s.DeleteSessionResponse, "client", session=True
)
SESSION_SET_MODE: Final = request(
    "session/set_mode",
    s.SetSessionModeRequest,
    s.SetSessionModeResponse,
    "client",
    session=True,
)
SESSION_SET_CONFIG_OPTION: Final = request(
    "session/set_config_option",
    SetSessionConfigOptionRequest,
    SetSessionConfigOptionResponse,
    "client",
    session=True,
)
#: v1 prompts carry no client-chosen key, so a lost answer cannot be retried blind.
SESSION_PROMPT: Final = request(
    "session/prompt", s.PromptRequest, s.PromptResponse, "client", session=True
)
SESSION_CANCEL: Final = notification("session/cancel", s.CancelNotification, "client", session=True)

# -- agent -> client --------------------------------------------------------------------
SESSION_UPDATE: Final = notification("session/update", u.SessionNotification, "agent", session=True)
SESSION_REQUEST_PERMISSION: Final = request(
    "session/request_permission",
    t.RequestPermissionRequest,
    t.RequestPermissionResponse,
    "agent",
    session=True,
)
FS_READ_TEXT_FILE: Final = request(
    "fs/read_text_file",
    c.ReadTextFileRequest,
    c.ReadTextFileResponse,
    "agent",
    retry="safe",
    session=True,
)
FS_WRITE_TEXT_FILE: Final = request(
    "fs/write_text_file", c.WriteTextFileRequest, c.WriteTextFileResponse, "agent", session=True
)
TERMINAL_CREATE: Final = request(
    "terminal/create", c.CreateTerminalRequest, c.CreateTerminalResponse, "agent", session=True
)
TERMINAL_OUTPUT: Final = request(
    "terminal/output",
    c.TerminalOutputRequest,
    c.TerminalOutputResponse,
    "agent",
    retry="safe",
    session=True,
)
TERMINAL_WAIT_FOR_EXIT: Final = request(
    "terminal/wait_for_exit",
    c.WaitForTerminalExitRequest,
    c.WaitForTerminalExitResponse,
    "agent",
    retry="safe",
    session=True,
)
TERMINAL_KILL: Final = request(
    "terminal/kill", c.KillTerminalRequest, c.KillTerminalResponse, "agent", session=True
)
TERMINAL_RELEASE: Final = request(
    "terminal/release", c.ReleaseTerminalRequest, c.ReleaseTerminalResponse, "agent", session=True
)
#: Scoped by ``sessionId`` or by ``requestId``: the session param is optional here.
ELICITATION_CREATE: Final = request(
    "elicitation/create",
    cast("type[el.CreateElicitationRequest]", el.CreateElicitationRequest),
    cast("type[el.CreateElicitationResponse]", el.CreateElicitationResponse),
    "agent",
    session=True,
)
ELICITATION_COMPLETE: Final = notification(
    "elicitation/complete", el.CompleteElicitationNotification, "agent"
)

# -- either side ------------------------------------------------------------------------
CANCEL_REQUEST: Final = notification("$/cancel_request", rpc.CancelRequestNotification, "either")

#: Every ACP v1 method, keyed by wire name.
METHODS: Final[dict[str, MethodSpec[Any, Any]]] = {
    spec.name: spec
    for spec in (
        INITIALIZE,
        AUTHENTICATE,
        LOGOUT,
        SESSION_NEW,
        SESSION_LOAD,
        SESSION_LIST,
        SESSION_RESUME,
        SESSION_CLOSE,
        SESSION_DELETE,
        SESSION_SET_MODE,
        SESSION_SET_CONFIG_OPTION,
        SESSION_PROMPT,
        SESSION_CANCEL,
        SESSION_UPDATE,
        SESSION_REQUEST_PERMISSION,
        FS_READ_TEXT_FILE,
        FS_WRITE_TEXT_FILE,
        TERMINAL_CREATE,
        TERMINAL_OUTPUT,
        TERMINAL_WAIT_FOR_EXIT,
        TERMINAL_KILL,
        TERMINAL_RELEASE,
        ELICITATION_CREATE,
        ELICITATION_COMPLETE,
        CANCEL_REQUEST,
    )
}

#: The v1 requests an agent sends that a client serves itself: files and terminals.
AGENT_REQUESTS: Final[dict[str, MethodSpec[Any, Any]]] = {
    spec.name: spec
    for spec in (
        FS_READ_TEXT_FILE,
        FS_WRITE_TEXT_FILE,
        TERMINAL_CREATE,
        TERMINAL_OUTPUT,
        TERMINAL_WAIT_FOR_EXIT,
        TERMINAL_KILL,
        TERMINAL_RELEASE,
    )
}

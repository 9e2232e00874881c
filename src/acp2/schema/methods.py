"""The method table: every ACP v2 wire method with its params / result types and direction.

``METHODS[name]`` is a :class:`MethodSpec`. ``sender`` is the side that sends the message
(``"client"``, ``"agent"`` or ``"either"``); ``result_type`` is ``None`` for
notifications. The table is the Aug method list plus Nov's ``tool_call/cancel`` and
``terminal/cancel``.
"""

from __future__ import annotations

from typing import Any, Final, Literal

import msgspec

from acp2.schema.auth import (
    LoginAuthRequest,
    LoginAuthResponse,
    LogoutAuthRequest,
    LogoutAuthResponse,
)
from acp2.schema.config import SetSessionConfigOptionRequest, SetSessionConfigOptionResponse
from acp2.schema.elicitation import (
    CompleteElicitationNotification,
    CreateElicitationRequest,
    CreateElicitationResponse,
)
from acp2.schema.initialize import InitializeRequest, InitializeResponse
from acp2.schema.jsonrpc import CancelRequestNotification
from acp2.schema.permission import RequestPermissionRequest, RequestPermissionResponse
from acp2.schema.session import (
    CancelSessionNotification,
    CloseSessionRequest,
    CloseSessionResponse,
    DeleteSessionRequest,
    DeleteSessionResponse,
    ListSessionsRequest,
    ListSessionsResponse,
    NewSessionRequest,
    NewSessionResponse,
    PromptRequest,
    PromptResponse,
    ResumeSessionRequest,
    ResumeSessionResponse,
)
from acp2.schema.terminal import CancelTerminalRequest, CancelTerminalResponse
from acp2.schema.tools import CancelToolCallRequest, CancelToolCallResponse
from acp2.schema.updates import UpdateSessionNotification

__all__ = [
    "AUTH_LOGIN",
    "AUTH_LOGOUT",
    "CANCEL_REQUEST",
    "ELICITATION_COMPLETE",
    "ELICITATION_CREATE",
    "INITIALIZE",
    "METHODS",
    "SESSION_CANCEL",
    "SESSION_CLOSE",
    "SESSION_DELETE",
    "SESSION_LIST",
    "SESSION_NEW",
    "SESSION_PROMPT",
    "SESSION_REQUEST_PERMISSION",
    "SESSION_RESUME",
    "SESSION_SET_CONFIG_OPTION",
    "SESSION_UPDATE",
    "TERMINAL_CANCEL",
    "TOOL_CALL_CANCEL",
    "MethodSpec",
    "Sender",
]

Sender = Literal["client", "agent", "either"]

INITIALIZE: Final = "initialize"
AUTH_LOGIN: Final = "auth/login"
AUTH_LOGOUT: Final = "auth/logout"
SESSION_NEW: Final = "session/new"
SESSION_LIST: Final = "session/list"
SESSION_RESUME: Final = "session/resume"
SESSION_CLOSE: Final = "session/close"
SESSION_DELETE: Final = "session/delete"
SESSION_PROMPT: Final = "session/prompt"
SESSION_SET_CONFIG_OPTION: Final = "session/set_config_option"
SESSION_CANCEL: Final = "session/cancel"
SESSION_UPDATE: Final = "session/update"
SESSION_REQUEST_PERMISSION: Final = "session/request_permission"
ELICITATION_CREATE: Final = "elicitation/create"
ELICITATION_COMPLETE: Final = "elicitation/complete"
CANCEL_REQUEST: Final = "$/cancel_request"
#: Nov only.
TOOL_CALL_CANCEL: Final = "tool_call/cancel"
#: Nov only.
TERMINAL_CANCEL: Final = "terminal/cancel"


class MethodSpec(msgspec.Struct, frozen=True):
    """One wire method: its name, params / result types, who sends it, and its kind.

    ``params_type`` and ``result_type`` are what :func:`acp2.schema.codec.decode` takes (a
    class or an open-union alias); ``result_type`` is ``None`` for notifications.
    """

    name: str
    params_type: Any
    result_type: Any
    sender: Sender
    nov_only: bool = False

    @property
    def kind(self) -> Literal["request", "notification"]:
        """``"notification"`` when the method has no result, else ``"request"``."""
        return "notification" if self.result_type is None else "request"


def _spec(
    name: str, params: Any, result: Any, sender: Sender, *, nov_only: bool = False
) -> tuple[str, MethodSpec]:
    return name, MethodSpec(name, params, result, sender, nov_only=nov_only)


#: Every ACP v2 method, keyed by wire name.
METHODS: Final[dict[str, MethodSpec]] = dict(
    [
        _spec(INITIALIZE, InitializeRequest, InitializeResponse, "client"),
        _spec(AUTH_LOGIN, LoginAuthRequest, LoginAuthResponse, "client"),
        _spec(AUTH_LOGOUT, LogoutAuthRequest, LogoutAuthResponse, "client"),
        _spec(SESSION_NEW, NewSessionRequest, NewSessionResponse, "client"),
        _spec(SESSION_LIST, ListSessionsRequest, ListSessionsResponse, "client"),
        _spec(SESSION_RESUME, ResumeSessionRequest, ResumeSessionResponse, "client"),
        _spec(SESSION_CLOSE, CloseSessionRequest, CloseSessionResponse, "client"),
        _spec(SESSION_DELETE, DeleteSessionRequest, DeleteSessionResponse, "client"),
        _spec(SESSION_PROMPT, PromptRequest, PromptResponse, "client"),
        _spec(
            SESSION_SET_CONFIG_OPTION,
            SetSessionConfigOptionRequest,
            SetSessionConfigOptionResponse,
            "client",
        ),
        _spec(SESSION_CANCEL, CancelSessionNotification, None, "client"),
        _spec(SESSION_UPDATE, UpdateSessionNotification, None, "agent"),
        _spec(
            SESSION_REQUEST_PERMISSION,
            RequestPermissionRequest,
            RequestPermissionResponse,
            "agent",
        ),
        _spec(ELICITATION_CREATE, CreateElicitationRequest, CreateElicitationResponse, "agent"),
        _spec(ELICITATION_COMPLETE, CompleteElicitationNotification, None, "agent"),
        _spec(CANCEL_REQUEST, CancelRequestNotification, None, "either"),
        _spec(
            TOOL_CALL_CANCEL, CancelToolCallRequest, CancelToolCallResponse, "client", nov_only=True
        ),
        _spec(
            TERMINAL_CANCEL, CancelTerminalRequest, CancelTerminalResponse, "client", nov_only=True
        ),
    ]
)

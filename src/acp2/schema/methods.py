"""The method table: every ACP v2 wire method with its params / result types and direction.

This module is the one place where v2 wire method names are written (v1's are in
:mod:`acp2.compat.v1.methods`; a test fails on a method name anywhere else). Each constant
(``SESSION_PROMPT``, ...) is a typed :class:`MethodSpec`; ``METHODS[name]`` finds one by
wire name. ``sender`` is the side that sends the message (``"client"``, ``"agent"`` or
``"either"``); ``result_type`` is ``None`` for notifications. The table is the Aug method
list plus Nov's ``tool_call/cancel`` and ``terminal/cancel``, plus the unstable methods of
the Preview whose shapes are published (:data:`UNSTABLE`: ``session/fork``,
``session/archive``, ``session/unarchive``, ``session/set_title``, ``auth/status``,
``auth/status_update``, ``providers/list``, ``providers/set``, ``providers/disable``,
and MCP over ACP's ``mcp/connect``, ``mcp/message``, ``mcp/disconnect``), each valid only
with the capability the agent advertises. ``mcp/message`` is both a request and a
notification: the request is in :data:`METHODS`, the notification in
:data:`MCP_NOTIFICATIONS` (a table keyed by wire name holds one).
"""

from __future__ import annotations

from typing import Any, Final, Generic, Literal, TypeVar, cast

from msgspec import Raw

from acp2.schema.auth import (
    AuthStatusRequest,
    AuthStatusResponse,
    AuthStatusUpdateNotification,
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
from acp2.schema.mcp_acp import (
    ConnectMcpRequest,
    ConnectMcpResponse,
    DisconnectMcpRequest,
    DisconnectMcpResponse,
    McpMessage,
)
from acp2.schema.permission import RequestPermissionRequest, RequestPermissionResponse
from acp2.schema.providers import (
    DisableProvidersRequest,
    DisableProvidersResponse,
    ListProvidersRequest,
    ListProvidersResponse,
    SetProvidersRequest,
    SetProvidersResponse,
)
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
from acp2.schema.session_ops import (
    ArchiveSessionRequest,
    ArchiveSessionResponse,
    ForkSessionRequest,
    ForkSessionResponse,
    SetSessionTitleRequest,
    SetSessionTitleResponse,
    UnarchiveSessionRequest,
    UnarchiveSessionResponse,
)
from acp2.schema.terminal import CancelTerminalRequest, CancelTerminalResponse
from acp2.schema.tools import CancelToolCallRequest, CancelToolCallResponse
from acp2.schema.updates import UpdateSessionNotification

__all__ = [
    "AUTH_LOGIN",
    "AUTH_LOGOUT",
    "AUTH_STATUS",
    "AUTH_STATUS_UPDATE",
    "CANCEL_REQUEST",
    "ELICITATION_COMPLETE",
    "ELICITATION_CREATE",
    "INITIALIZE",
    "MCP_CONNECT",
    "MCP_DISCONNECT",
    "MCP_MESSAGE",
    "MCP_MESSAGE_NOTIFICATION",
    "MCP_NOTIFICATIONS",
    "METHODS",
    "PROVIDERS_DISABLE",
    "PROVIDERS_LIST",
    "PROVIDERS_SET",
    "SESSION_ARCHIVE",
    "SESSION_CANCEL",
    "SESSION_CLOSE",
    "SESSION_DELETE",
    "SESSION_FORK",
    "SESSION_LIST",
    "SESSION_NEW",
    "SESSION_PARAM",
    "SESSION_PROMPT",
    "SESSION_REQUEST_PERMISSION",
    "SESSION_RESUME",
    "SESSION_SET_CONFIG_OPTION",
    "SESSION_SET_TITLE",
    "SESSION_UNARCHIVE",
    "SESSION_UPDATE",
    "TERMINAL_CANCEL",
    "TOOL_CALL_CANCEL",
    "UNSTABLE",
    "MethodSpec",
    "RetryClass",
    "Sender",
    "notification",
    "request",
]

Sender = Literal["client", "agent", "either"]

#: How a request may be retried after a lost answer (the Preview's retry classes):
#: ``"safe"`` has no effect (read-only), ``"keyed"`` is made exactly-once by a key the
#: sender chooses (a prompt's ``idempotencyKey``, see :class:`acp2.schema.PromptRequest`),
#: ``"never"`` must not be sent twice blind.
RetryClass = Literal["safe", "keyed", "never"]

P = TypeVar("P")
R = TypeVar("R")

#: Where the params of every session-scoped method (v1 and v2) name the session.
SESSION_PARAM: Final = "sessionId"


class MethodSpec(Generic[P, R]):
    """One wire method: its name, params / result types, who sends it, and its kind.

    ``MethodSpec[P, R]`` types :meth:`acp2.rpc.Connection.call` and
    :meth:`acp2.rpc.Connection.on`: params are ``P`` and the result is ``R`` (``None`` for a
    notification). ``params_type`` and ``result_type`` are what
    :func:`acp2.schema.codec.decode` takes (a class or an open-union alias). Immutable;
    compares by value.
    """

    __slots__ = (
        "joins_session",
        "name",
        "nov_only",
        "params_type",
        "result_type",
        "retry",
        "sender",
        "session_param",
    )

    name: str
    params_type: Any
    result_type: Any
    sender: Sender
    nov_only: bool
    retry: RetryClass
    #: The params key that names the session the message is about (``"sessionId"``), or
    #: None for a method whose params name none (``initialize``, ``session/new``, ...).
    session_param: str | None
    #: Whether the request attaches the sending connection to a session: the one named at
    #: ``session_param`` (resume, load, attach), or a new one its result names
    #: (``session/new``). Serve's stream bookkeeping reads it (:mod:`acp2.serve.cursor`).
    joins_session: bool

    def __init__(
        self,
        name: str,
        params_type: Any,
        result_type: Any,
        sender: Sender,
        *,
        nov_only: bool = False,
        retry: RetryClass = "never",
        session_param: str | None = None,
        joins_session: bool = False,
    ) -> None:
        for field, value in (
            ("name", name),
            ("params_type", params_type),
            ("result_type", result_type),
            ("sender", sender),
            ("nov_only", nov_only),
            ("retry", retry),
            ("session_param", session_param),
            ("joins_session", joins_session),
        ):
            object.__setattr__(self, field, value)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("MethodSpec is immutable")

    def _key(self) -> tuple[Any, ...]:
        return (self.name, self.params_type, self.result_type, self.sender, self.nov_only)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, MethodSpec) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self.name)

    def __repr__(self) -> str:
        return f"MethodSpec({self.name!r}, sender={self.sender!r})"

    @property
    def kind(self) -> Literal["request", "notification"]:
        """``"notification"`` when the method has no result, else ``"request"``."""
        return "notification" if self.result_type is None else "request"


def request(
    name: str,
    params: type[P],
    result: type[R],
    sender: Sender,
    *,
    nov_only: bool = False,
    retry: RetryClass = "never",
    session: bool = False,
    joins: bool = False,
) -> MethodSpec[P, R]:
    """A request's :class:`MethodSpec` (for method tables: the v2 one here, v1's in
    :mod:`acp2.compat.v1.methods`). ``session``: its params name a session at
    :data:`SESSION_PARAM`; ``joins``: see :attr:`MethodSpec.joins_session`."""
    return MethodSpec(
        name,
        params,
        result,
        sender,
        nov_only=nov_only,
        retry=retry,
        session_param=SESSION_PARAM if session else None,
        joins_session=joins,
    )


def notification(
    name: str, params: type[P], sender: Sender, *, session: bool = False
) -> MethodSpec[P, None]:
    """A notification's :class:`MethodSpec` (no result, never answered); ``session`` as
    for :func:`request`."""
    return MethodSpec(name, params, None, sender, session_param=SESSION_PARAM if session else None)


# The v2 methods. Each constant is typed, so ``conn.call(SESSION_PROMPT, params)`` returns a
# PromptResponse; ``.name`` is the wire name.
INITIALIZE: Final = request(
    "initialize", InitializeRequest, InitializeResponse, "client", retry="safe"
)
AUTH_LOGIN: Final = request("auth/login", LoginAuthRequest, LoginAuthResponse, "client")
AUTH_LOGOUT: Final = request("auth/logout", LogoutAuthRequest, LogoutAuthResponse, "client")
SESSION_NEW: Final = request(
    "session/new", NewSessionRequest, NewSessionResponse, "client", joins=True
)
SESSION_LIST: Final = request(
    "session/list", ListSessionsRequest, ListSessionsResponse, "client", retry="safe"
)
SESSION_RESUME: Final = request(
    "session/resume",
    ResumeSessionRequest,
    ResumeSessionResponse,
    "client",
    session=True,
    joins=True,
)
SESSION_CLOSE: Final = request(
    "session/close", CloseSessionRequest, CloseSessionResponse, "client", session=True
)
SESSION_DELETE: Final = request(
    "session/delete", DeleteSessionRequest, DeleteSessionResponse, "client", session=True
)
SESSION_PROMPT: Final = request(
    "session/prompt", PromptRequest, PromptResponse, "client", retry="keyed", session=True
)
SESSION_SET_CONFIG_OPTION: Final = request(
    "session/set_config_option",
    SetSessionConfigOptionRequest,
    SetSessionConfigOptionResponse,
    "client",
    session=True,
)
SESSION_CANCEL: Final = notification(
    "session/cancel", CancelSessionNotification, "client", session=True
)
SESSION_UPDATE: Final = notification(
    "session/update", UpdateSessionNotification, "agent", session=True
)
SESSION_REQUEST_PERMISSION: Final = request(
    "session/request_permission",
    RequestPermissionRequest,
    RequestPermissionResponse,
    "agent",
    session=True,
)
#: Scoped by ``sessionId`` or by ``requestId``: the session param is optional here.
ELICITATION_CREATE: Final = request(
    "elicitation/create",
    cast("type[CreateElicitationRequest]", CreateElicitationRequest),
    cast("type[CreateElicitationResponse]", CreateElicitationResponse),
    "agent",
    session=True,
)
ELICITATION_COMPLETE: Final = notification(
    "elicitation/complete", CompleteElicitationNotification, "agent"
)
CANCEL_REQUEST: Final = notification("$/cancel_request", CancelRequestNotification, "either")
#: Nov only.
TOOL_CALL_CANCEL: Final = request(
    "tool_call/cancel",
    CancelToolCallRequest,
    CancelToolCallResponse,
    "client",
    nov_only=True,
    session=True,
)
#: Nov only.
TERMINAL_CANCEL: Final = request(
    "terminal/cancel",
    CancelTerminalRequest,
    CancelTerminalResponse,
    "client",
    nov_only=True,
    session=True,
)

# Unstable (Preview): modelled from the published Rust schema crate; each needs the
# capability named in its params' docstring. A fork names its source session; the new
# one is in the result (not a join of the named session).
SESSION_FORK: Final = request(
    "session/fork", ForkSessionRequest, ForkSessionResponse, "client", session=True
)
SESSION_ARCHIVE: Final = request(
    "session/archive", ArchiveSessionRequest, ArchiveSessionResponse, "client", session=True
)
SESSION_UNARCHIVE: Final = request(
    "session/unarchive",
    UnarchiveSessionRequest,
    UnarchiveSessionResponse,
    "client",
    session=True,
)
SESSION_SET_TITLE: Final = request(
    "session/set_title", SetSessionTitleRequest, SetSessionTitleResponse, "client", session=True
)
AUTH_STATUS: Final = request(
    "auth/status", AuthStatusRequest, AuthStatusResponse, "client", retry="safe"
)
AUTH_STATUS_UPDATE: Final = notification(
    "auth/status_update", AuthStatusUpdateNotification, "agent"
)
# The custom LLM endpoint RFD: configure the agent's model providers (``providers``).
PROVIDERS_LIST: Final = request(
    "providers/list", ListProvidersRequest, ListProvidersResponse, "client", retry="safe"
)
PROVIDERS_SET: Final = request("providers/set", SetProvidersRequest, SetProvidersResponse, "client")
PROVIDERS_DISABLE: Final = request(
    "providers/disable", DisableProvidersRequest, DisableProvidersResponse, "client"
)

# Unstable MCP over ACP (Rust schema crate v2 ``mcp.rs``, RFD ``rfds/mcp-over-acp``): only
# towards an agent advertising ``session.mcp.acp``. The agent connects and disconnects; MCP
# messages go both ways, as requests (result: the inner MCP result, unchanged) or
# notifications.
MCP_CONNECT: Final = request("mcp/connect", ConnectMcpRequest, ConnectMcpResponse, "agent")
MCP_MESSAGE: Final = request("mcp/message", McpMessage, Raw, "either")
MCP_MESSAGE_NOTIFICATION: Final = notification("mcp/message", McpMessage, "either")
MCP_DISCONNECT: Final = request(
    "mcp/disconnect", DisconnectMcpRequest, DisconnectMcpResponse, "agent"
)

#: The unstable methods: in no vendored schema, never sent by acp2 on its own.
UNSTABLE: Final[frozenset[str]] = frozenset(
    spec.name
    for spec in (
        SESSION_FORK,
        SESSION_ARCHIVE,
        SESSION_UNARCHIVE,
        SESSION_SET_TITLE,
        AUTH_STATUS,
        AUTH_STATUS_UPDATE,
        MCP_CONNECT,
        MCP_MESSAGE,
        MCP_DISCONNECT,
        PROVIDERS_LIST,
        PROVIDERS_SET,
        PROVIDERS_DISABLE,
    )
)

#: Every ACP v2 method, keyed by wire name.
METHODS: Final[dict[str, MethodSpec[Any, Any]]] = {
    spec.name: spec
    for spec in (
        INITIALIZE,
        AUTH_LOGIN,
        AUTH_LOGOUT,
        SESSION_NEW,
        SESSION_LIST,
        SESSION_RESUME,
        SESSION_CLOSE,
        SESSION_DELETE,
        SESSION_PROMPT,
        SESSION_SET_CONFIG_OPTION,
        SESSION_CANCEL,
        SESSION_UPDATE,
        SESSION_REQUEST_PERMISSION,
        ELICITATION_CREATE,
        ELICITATION_COMPLETE,
        CANCEL_REQUEST,
        TOOL_CALL_CANCEL,
        TERMINAL_CANCEL,
        SESSION_FORK,
        SESSION_ARCHIVE,
        SESSION_UNARCHIVE,
        SESSION_SET_TITLE,
        AUTH_STATUS,
        AUTH_STATUS_UPDATE,
        MCP_CONNECT,
        MCP_MESSAGE,
        MCP_DISCONNECT,
        PROVIDERS_LIST,
        PROVIDERS_SET,
        PROVIDERS_DISABLE,
    )
}

#: The notification form of ``mcp/message`` (the request form is ``METHODS["mcp/message"]``),
#: registered from this table by a side that serves MCP over ACP.
MCP_NOTIFICATIONS: Final[dict[str, MethodSpec[Any, None]]] = {
    MCP_MESSAGE_NOTIFICATION.name: MCP_MESSAGE_NOTIFICATION
}

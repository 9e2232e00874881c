"""The one exception tree of acp2.

::

    Acp2Error
    ├── RequestError                 a JSON-RPC error object (code, message, data)
    │   ├── ParseError               -32700  the bytes were not JSON
    │   ├── InvalidRequest           -32600  JSON, but not a valid JSON-RPC message
    │   ├── MethodNotFound           -32601
    │   ├── InvalidParams            -32602
    │   ├── InternalError            -32603
    │   │   └── StoreUnusable        the session store cannot be read or written (names it)
    │   ├── RequestCancelled         -32800
    │   ├── AuthRequired             -32000
    │   ├── ResourceNotFound         -32002  (unknown session: data {"sessionId": ...})
    │   ├── SessionInUse             -32010  another live agent process serves the session
    │   └── UnsupportedProtocolVersion -32022  (data {"requested", "supported"})
    ├── ConnectionClosed             the peer or the transport went away
    │   └── AgentClosed              ... and the message ends with the agent's stderr tail
    │       └── AgentExited          (acp2.client) it went away before answering initialize
    ├── AgentStartError (OSError)    an agent command could not be started
    ├── LocalProtocolError           our own side tried something the protocol forbids
    │   └── MissingHandler (TypeError)  a runtime's handlers do not cover its method table
    ├── RemoteProtocolError          the peer sent something the protocol forbids
    │   └── AgentStrayOutput (TimeoutError)  (acp2.client) non-JSON on stdout, no answer
    ├── HistoryWriteError (RuntimeError)  session history could not be committed (retried)
    ├── ModelError                   the coding agent's model could not answer
    ├── ToolError                    a coding-agent tool failed; the model sees the message
    ├── McpServerError               an MCP server of a session is unusable or a call failed
    ├── McpConfigError (ValueError)  an ``--mcp`` flag or MCP config file is wrong
    ├── CheckError                   ``acp2 check`` could not run at all
    ├── MissingJsonschema (RuntimeError)  ``acp2 check`` needs the optional jsonschema
    └── RegistryError                the ACP registry cannot be read or an entry not launched
        ├── RegistryUnavailable      the index could not be fetched and no cache was usable
        └── UnsafeDownload           an agent archive failed its checksum or a safety check

Foreign exceptions are mapped at the boundary where they arise: ``OSError`` from starting
a process becomes :class:`AgentStartError` (wording in :mod:`acp2.diagnose`), a broken
pipe or closed stream becomes :class:`ConnectionClosed`, a handler's unexpected exception
becomes ``-32603`` in the connection.

A handler raises a :class:`RequestError` subclass to answer with that error; any other
exception becomes ``-32603`` with a one-line message (in exactly one place: the
connection). :meth:`acp2.rpc.Connection.request` raises the class matching the code of an
error response, with ``remote=True``; unknown codes raise :class:`RequestError` itself.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

__all__ = [
    "Acp2Error",
    "AgentClosed",
    "AgentStartError",
    "AuthRequired",
    "CheckError",
    "ConnectionClosed",
    "HistoryWriteError",
    "InternalError",
    "InvalidParams",
    "InvalidRequest",
    "LocalProtocolError",
    "McpConfigError",
    "McpServerError",
    "MethodNotFound",
    "MissingHandler",
    "MissingJsonschema",
    "ModelError",
    "ParseError",
    "RegistryError",
    "RegistryUnavailable",
    "RemoteProtocolError",
    "RequestCancelled",
    "RequestError",
    "ResourceNotFound",
    "SessionInUse",
    "StoreUnusable",
    "ToolError",
    "UnsafeDownload",
    "UnsupportedProtocolVersion",
    "error_for_code",
    "summarize",
]


class Acp2Error(Exception):
    """Base class of every exception acp2 raises on purpose."""


class RequestError(Acp2Error):
    """A JSON-RPC error: ``code`` (int), ``message`` (one short sentence), optional ``data``.

    ``remote`` is True when the error came from the peer in an error response.
    """

    code: ClassVar[int] = -32603
    default_message: ClassVar[str] = "Request failed"

    def __init__(
        self,
        message: str | None = None,
        data: Any = None,
        *,
        code: int | None = None,
        remote: bool = False,
    ) -> None:
        self.message = message or self.default_message
        self.data = data
        self.remote = remote
        if code is not None:
            self.code = code  # type: ignore[misc]
        super().__init__(self.message)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code}, message={self.message!r})"

    def to_wire(self) -> dict[str, Any]:
        """Return the JSON-RPC error object for this error."""
        obj: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            obj["data"] = self.data
        return obj


class ParseError(RequestError):
    """-32700: the message was not valid JSON."""

    code = -32700
    default_message = "Parse error"


class InvalidRequest(RequestError):
    """-32600: the JSON is not a valid JSON-RPC request."""

    code = -32600
    default_message = "Invalid request"


class MethodNotFound(RequestError):
    """-32601: no handler for the method."""

    code = -32601
    default_message = "Method not found"


class InvalidParams(RequestError):
    """-32602: the params do not match the method's schema or rules."""

    code = -32602
    default_message = "Invalid params"


class InternalError(RequestError):
    """-32603: the handler failed."""

    code = -32603
    default_message = "Internal error"


class StoreUnusable(InternalError):
    """-32603: the session history store cannot be read or written (corrupt, read-only,
    full, unreachable). The message names the store (a SQLite path, or a database's host
    and name, never its credentials) and the reason; raised at start-up by
    :func:`acp2.store.failures.open_checked` and for any request that met the failure."""

    default_message = "The session store cannot be used"


class RequestCancelled(RequestError):
    """-32800: the request was cancelled before it completed."""

    code = -32800
    default_message = "Request cancelled"


class AuthRequired(RequestError):
    """-32000: the agent needs ``auth/login`` first."""

    code = -32000
    default_message = "Authentication required"


class ResourceNotFound(RequestError):
    """-32002: the named resource (e.g. a session) does not exist."""

    code = -32002
    default_message = "Resource not found"


class UnsupportedProtocolVersion(RequestError):
    """-32022: no protocol version acceptable to both sides."""

    code = -32022
    default_message = "Unsupported protocol version"


class SessionInUse(RequestError):
    """-32010: another live agent process is serving this session."""

    code = -32010
    default_message = "The session is in use by another agent process"


class ConnectionClosed(Acp2Error):
    """The connection is closed: the peer exited, the transport broke, or we closed it."""


class AgentClosed(ConnectionClosed):
    """``ConnectionClosed`` whose message ends with the agent's stderr tail.

    The message is rendered when it is read, not when the connection closed: a crashing
    agent's last stderr lines often arrive just after its stdout ends.
    """

    def __init__(self, describe: Callable[[], str]) -> None:
        super().__init__("The agent closed the connection")
        self._describe = describe

    def __str__(self) -> str:
        return self._describe()


class AgentStartError(Acp2Error, OSError):
    """An agent command could not be started (not found, not executable, bad cwd).

    The message says which and what to do, e.g. ``command not found: NAME`` with an
    ``npx`` / ``uvx`` hint when NAME looks like a package.
    """


class HistoryWriteError(Acp2Error, RuntimeError):
    """Session history could not be committed; the updates stay queued and are retried."""


class ModelError(Acp2Error):
    """The model could not answer (bad credentials, server down, retries exhausted...).

    The message is one or two sentences meant for the user.
    """


class ToolError(Acp2Error):
    """A tool failed in a way the model can read and act on (bad path, no match, ...).

    The message is shown to the model verbatim after ``Error:``.
    """


class McpServerError(Acp2Error):
    """An MCP server a client gave the session could not be used: it failed to start,
    died, timed out or answered with an error. The message names the server and says why
    in one sanitized line; the session and the other servers are unaffected."""


class McpConfigError(Acp2Error, ValueError):
    """An ``--mcp`` flag or an MCP config file cannot be used; the message says which server
    and why, naming a missing ``${VARIABLE}`` but never printing a value."""


class CheckError(Acp2Error):
    """``acp2 check`` could not run at all (bad options, or the agent cannot be started)."""


class MissingJsonschema(Acp2Error, RuntimeError):
    """``jsonschema`` (the ``check`` extra) is not installed."""


class LocalProtocolError(Acp2Error):
    """Our side tried something the protocol forbids; nothing was sent or changed."""


class MissingHandler(LocalProtocolError, TypeError):
    """A runtime's handlers do not match its method table (:mod:`acp2.rpc.handlers`): a
    method of its direction is neither handled nor listed as unhandled, a handler is for a
    method the table does not give it, or a capability it advertises has a method it does
    not serve. Raised at start-up, before any message is served; the message names every
    such method."""


class RemoteProtocolError(Acp2Error):
    """The peer sent something the protocol forbids (e.g. a malformed response)."""


class RegistryError(Acp2Error):
    """The ACP registry index cannot be used, or an entry cannot be launched here (unknown
    id, no distribution for this platform, a malformed entry). The message is for the user
    and names the entry."""


class RegistryUnavailable(RegistryError):
    """The index could not be fetched and no cached copy could stand in for it."""


class UnsafeDownload(RegistryError):
    """A downloaded agent archive was refused: wrong sha256, too large, an entry with an
    absolute path, ``..``, a link or a device, or an unpack place others can write. Nothing
    from it is run; the partial download is deleted."""


_BY_CODE: dict[int, type[RequestError]] = {
    cls.code: cls
    for cls in (
        ParseError,
        InvalidRequest,
        MethodNotFound,
        InvalidParams,
        InternalError,
        RequestCancelled,
        AuthRequired,
        ResourceNotFound,
        SessionInUse,
        UnsupportedProtocolVersion,
    )
}


def error_for_code(
    code: int, message: str, data: Any = None, *, remote: bool = True
) -> RequestError:
    """Build the :class:`RequestError` subclass for a wire error ``code``.

    Unknown codes give a plain :class:`RequestError` carrying that code.
    """
    cls = _BY_CODE.get(code)
    if cls is None:
        return RequestError(message, data, code=code, remote=remote)
    return cls(message, data, remote=remote)


def summarize(exc: BaseException) -> str:
    """Return ``"TypeName: first line of the message"`` (just the type name if empty).

    The one-line form used wherever an unexpected exception is reported to a peer.
    """
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__

"""The one exception tree of acp2.

::

    Acp2Error
    ├── RequestError                 a JSON-RPC error object (code, message, data)
    │   ├── ParseError               -32700  the bytes were not JSON
    │   ├── InvalidRequest           -32600  JSON, but not a valid JSON-RPC message
    │   │   ├── WriteRefused         (bridge) the user refused an fs/write_text_file
    │   │   ├── CommandRefused       (bridge) the user refused a terminal/create
    │   │   └── TooManyTerminals     (bridge) a session holds the most terminals it may
    │   ├── MethodNotFound           -32601
    │   ├── InvalidParams            -32602  (also what v1 params that do not decode raise)
    │   ├── InternalError            -32603  (made by internal_error() for a failure)
    │   │   └── StoreUnusable        the session store cannot be read or written (names it)
    │   │       └── HistoryWriteError (RuntimeError)  history could not be committed (retried)
    │   ├── RequestCancelled         -32800
    │   ├── AuthRequired             -32000
    │   ├── ResourceNotFound         -32002  (unknown session: data {"sessionId": ...})
    │   ├── SessionInUse             -32010  another live agent process serves the session
    │   └── UnsupportedProtocolVersion -32022  (data {"requested", "supported"})
    ├── ConnectionClosed             the peer or the transport went away
    │   ├── AgentClosed              ... and the message ends with the agent's stderr tail
    │   │   └── AgentExited          (acp2.client) it went away before answering initialize
    │   ├── ResumeRefused            a durable remote link cannot be resumed (code says why)
    │   └── LinkLost                 a plain remote link broke; nothing can be resumed
    ├── RemoteRefused (ConnectionError)  the server refused to open a connection (status)
    ├── AgentStartError (OSError)    an agent command could not be started
    ├── LocalProtocolError           our own side tried something the protocol forbids
    │   ├── ElicitationUnsupported   the client did not advertise that elicitation mode
    │   └── MissingHandler (TypeError)  a runtime's handlers do not cover its method table
    ├── RemoteProtocolError          the peer sent something the protocol forbids
    │   ├── AgentStrayOutput (TimeoutError)  (acp2.client) non-JSON on stdout, no answer
    │   └── ElicitationContentError  a form answer that does not fit its schema
    ├── NegotiationError (ValueError)  initialize names no readable version (code -32602)
    ├── PromptFailed                 (v1 bridge) a v2 turn failed; its error answers the v1 prompt
    ├── AgentGone                    (v1 bridge) the agent's stdout ended before initialize
    ├── BadInitializeAnswer          (v1 bridge) the agent's initialize result is unreadable
    ├── ModelError                   the coding agent's model could not answer
    ├── ToolError                    a coding-agent tool failed; the model sees the message
    │   ├── SandboxError             a path outside the session's roots (or unusable)
    │   └── MissingPathError         a path inside the roots that does not exist
    ├── BeneathError (OSError)       a path not openable below its root without a symlink
    ├── StoppedError                 raised inside a stopped tool worker; nobody waits
    ├── McpServerError               an MCP server of a session is unusable or a call failed
    ├── McpConfigError (ValueError)  an ``--mcp`` flag or MCP config file is wrong
    ├── CheckError                   ``acp2 check`` could not run at all
    ├── ProbeAborted                 ``acp2 check``: stop a probe, its open rows are SKIP
    ├── MissingJsonschema (RuntimeError)  ``acp2 check`` needs the optional jsonschema
    ├── BodyTooLarge                 (serve) an HTTP request body over the size limit
    ├── ClientDisconnected           (serve) the client left before its body was read
    ├── TooManyStreams               (serve) a connection has its most session streams
    ├── Unrestorable                 (serve) a stream cannot be rebuilt exactly (code)
    ├── CursorTooOld                 (durable) what follows a seq is no longer held
    ├── SeqGap                       (durable) a message's seq skips ahead
    ├── DurableFrameError (ValueError)  (durable) an envelope of neither frame shape
    ├── SseError (ValueError)        an SSE event larger than the parser's bound
    ├── FormFieldError (ValueError)  (ui) an answer that does not fit its form field
    ├── FormUnfillable (ValueError)  (ui) a form with a required field of unknown type
    ├── InvalidSettings (ValueError)  (client) a settings file or permission rule unreadable
    └── RegistryError                the ACP registry cannot be read or an entry not launched
        ├── RegistryUnavailable      the index could not be fetched and no cache was usable
        └── UnsafeDownload           an agent archive failed its checksum or a safety check

A builtin in parentheses is a second base callers may catch by; ``(bridge)``, ``(serve)``
... name the layer that raises it, which re-exports it under its old name
(``acp2.client.AgentExited``, ``acp2.check.probes.base.Abort`` ...). A class defined
anywhere else starts with ``_`` and never leaves its module (tests/test_errors_tree.py).

Foreign exceptions are mapped at the boundary where they arise: ``OSError`` from starting
a process becomes :class:`AgentStartError` (wording in :mod:`acp2.diagnose`), a broken
pipe or closed stream becomes :class:`ConnectionClosed`, a handler's unexpected exception
becomes ``-32603`` through :func:`internal_error` (the one place such an answer is made).

A handler raises a :class:`RequestError` subclass to answer with that error; any other
exception becomes ``-32603`` with a one-line message, made in exactly one place:
:func:`internal_error`, which the connection and the bridges call.
:meth:`acp2.rpc.Connection.request` raises the class matching the code of an error
response, with ``remote=True``; unknown codes raise :class:`RequestError` itself.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, ClassVar

__all__ = [
    "Acp2Error",
    "AgentClosed",
    "AgentExited",
    "AgentGone",
    "AgentStartError",
    "AgentStrayOutput",
    "AuthRequired",
    "BadInitializeAnswer",
    "BeneathError",
    "BodyTooLarge",
    "CheckError",
    "ClientDisconnected",
    "CommandRefused",
    "ConnectionClosed",
    "CursorTooOld",
    "DurableFrameError",
    "ElicitationContentError",
    "ElicitationUnsupported",
    "FormFieldError",
    "FormUnfillable",
    "HistoryWriteError",
    "InternalError",
    "InvalidParams",
    "InvalidRequest",
    "LinkLost",
    "LocalProtocolError",
    "McpConfigError",
    "McpServerError",
    "MethodNotFound",
    "MissingHandler",
    "MissingJsonschema",
    "MissingPathError",
    "ModelError",
    "NegotiationError",
    "ParseError",
    "ProbeAborted",
    "PromptFailed",
    "RegistryError",
    "RegistryUnavailable",
    "RemoteProtocolError",
    "RemoteRefused",
    "RequestCancelled",
    "RequestError",
    "ResourceNotFound",
    "ResumeRefused",
    "SandboxError",
    "SeqGap",
    "SessionInUse",
    "SseError",
    "StoppedError",
    "StoreUnusable",
    "TooManyStreams",
    "TooManyTerminals",
    "ToolError",
    "Unrestorable",
    "UnsafeDownload",
    "UnsupportedProtocolVersion",
    "WriteRefused",
    "described",
    "error_for_code",
    "internal_error",
    "summarize",
    "with_reason",
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


class HistoryWriteError(StoreUnusable, RuntimeError):
    """Session history could not be committed; the updates stay queued and are retried.
    A :class:`StoreUnusable`: a request that meets it is answered with it as it is (the
    message names the store and the reason)."""


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


# -- raised by one layer, caught by callers or another layer (re-exported where raised) --


class WriteRefused(InvalidRequest):
    """The user (the client's permission policy) refused an ``fs/write_text_file``."""

    default_message = "The user refused to let the agent write this file"


class CommandRefused(InvalidRequest):
    """The user (the client's permission policy) refused a ``terminal/create``."""

    default_message = "The user refused to let the agent run this command"


class TooManyTerminals(InvalidRequest):
    """A session holds :data:`acp2.bridge.back_terminal.MAX_TERMINALS` running terminals."""

    default_message = "Too many terminals: release one first"


class AgentExited(AgentClosed):
    """The agent exited before answering ``initialize``.

    The message gives its exit status, the first non-JSON line it wrote on stdout (if
    any) and the tail of its stderr; rendered when read, like :class:`AgentClosed`.
    """

    def __init__(self, describe: Callable[[], str], status: Callable[[], int | None]) -> None:
        super().__init__(describe)
        self._status = status

    @property
    def returncode(self) -> int | None:
        """The agent's exit status (negative: killed by that signal; None: unknown)."""
        return self._status()


class AgentStrayOutput(RemoteProtocolError, TimeoutError):
    """The agent wrote a line that is not JSON on stdout and then did not answer
    ``initialize``. ``line`` is that line, quoted and sanitized."""

    def __init__(self, message: str, line: str) -> None:
        super().__init__(message)
        self.line = line


class ResumeRefused(ConnectionClosed):
    """The server cannot resume a dropped durable link (it forgot the connection or what
    was missed): only a new connection and ``session/resume`` can go on. ``code`` is the
    WebSocket close code or HTTP status that said so."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


class LinkLost(ConnectionClosed):
    """A plain link (no durability granted) broke: nothing can be resumed, only a new
    connection and ``session/resume`` of the sessions can go on."""


class RemoteRefused(Acp2Error, ConnectionError):
    """The server refused to open a connection (``status``: the HTTP status, or ``0``
    when it could not be reached); ``str()`` says why, with the server's text sanitized."""

    def __init__(self, message: str, status: int = 0) -> None:
        super().__init__(message)
        self.status = status


class ElicitationUnsupported(LocalProtocolError):
    """The client did not advertise the elicitation mode asked for; nothing was sent."""


class ElicitationContentError(RemoteProtocolError):
    """The client accepted a form with content that does not fit the requested schema.

    ``problems`` lists what is wrong, one short sentence per field; ``content`` is what
    the client sent (untrusted: never use it as if it were valid).
    """

    def __init__(self, problems: list[str], content: Any) -> None:
        self.problems = problems
        self.content = content
        super().__init__(
            "the client's form content does not fit the schema: " + "; ".join(problems)
        )


class NegotiationError(Acp2Error, ValueError):
    """``initialize`` params or result whose version cannot be read.

    ``code`` is ``-32602`` (invalid params); ``str(error)`` is one sentence for the
    JSON-RPC error message, naming what was found.
    """

    code: ClassVar[int] = InvalidParams.code


class PromptFailed(Acp2Error):
    """A v2 turn ended ``idle`` with stop reason ``error``: v1 has no such stop reason, so
    the held v1 prompt is answered with ``error`` (the v2 ``Error`` model) instead."""

    def __init__(self, error: Any) -> None:
        super().__init__(error.message)
        self.error = error


class AgentGone(Acp2Error):
    """The v1 bridge's agent closed its stdout before it answered ``initialize``;
    ``hello`` is the client's ``initialize`` (a :class:`acp2.bridge.hello.Hello`)."""

    def __init__(self, hello: Any) -> None:
        super().__init__("the agent closed its stdout before answering initialize")
        self.hello = hello


class BadInitializeAnswer(Acp2Error):
    """The v1 bridge's agent answered ``initialize`` with a result the bridge cannot read;
    ``hello`` is the client's ``initialize`` (a :class:`acp2.bridge.hello.Hello`)."""

    def __init__(self, hello: Any, reason: str) -> None:
        super().__init__(f"the agent's answer to initialize is malformed: {reason}")
        self.hello = hello


class SandboxError(ToolError):
    """A path outside the session's root set (or otherwise unusable)."""


class MissingPathError(ToolError):
    """The path is inside the roots but does not exist."""


class BeneathError(Acp2Error, OSError):
    """The path could not be opened below the root without following a symlink."""


class StoppedError(Acp2Error):
    """Raised inside a stopped tool worker; nobody waits for its result any more."""


class ProbeAborted(Acp2Error):
    """Stop an ``acp2 check`` probe; its undecided rows become SKIP with this message."""


class BodyTooLarge(Acp2Error):
    """``acp2 serve``: an HTTP request body is over the size limit (answered 413)."""


class ClientDisconnected(Acp2Error):
    """``acp2 serve``: the client went away before its request body was read."""


class TooManyStreams(Acp2Error):
    """``acp2 serve``: the connection already has ``max_session_streams`` streams."""


class Unrestorable(Acp2Error):
    """``acp2 serve``: a stream cannot be rebuilt exactly; refuse with ``code``, ``reason``."""

    def __init__(self, code: int, reason: str) -> None:
        super().__init__(reason)
        self.code = code
        self.reason = reason


class CursorTooOld(Acp2Error):
    """The durable window no longer holds what follows the given seq: no resume."""


class SeqGap(Acp2Error):
    """A durable message arrived whose seq skips ahead of the next expected one."""


class DurableFrameError(Acp2Error, ValueError):
    """A durable envelope that is not one of the two frame shapes."""


class SseError(Acp2Error, ValueError):
    """An SSE event larger than the parser's bound."""


class FormFieldError(Acp2Error, ValueError):
    """An answer that does not fit its form field; the message (shown) says why."""


class FormUnfillable(Acp2Error, ValueError):
    """A form this client cannot show: a required field of an unknown type."""


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


def internal_error(cause: BaseException | str) -> InternalError:
    """Return the ``-32603`` error that answers a request: the one place one is made.

    For an exception (a handler or a bridge failed unexpectedly) the message is
    ``"Internal error: "`` and :func:`summarize` of it, at most 200 characters: one line,
    no traceback. A string (a layer answering a request it cannot pass on, e.g. the bridge
    whose agent is gone) is the message as given.
    """
    if isinstance(cause, str):
        return InternalError(cause)
    return InternalError(f"Internal error: {summarize(cause)}"[:200])


def summarize(exc: BaseException) -> str:
    """Return ``"TypeName: first line of the message"`` (just the type name if empty).

    The one-line form used wherever an unexpected exception is reported to a peer.
    """
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


class InvalidSettings(Acp2Error, ValueError):
    """A settings file (:mod:`acp2.client.settings`) or a permission rule in it that
    cannot be read; the message names the file or the rule."""


#: The longest reason :func:`with_reason` takes from an error's ``data``.
MAX_REASON = 300
#: ``data`` keys the official SDKs and agents put a reason under, in the order tried.
_REASON_KEYS = ("details", "message", "reason", "error")


def with_reason(message: str, data: Any) -> str:
    """``message`` with the reason an error's ``data`` holds appended, when the message
    does not say it already: ``("Internal error", {"details": "disk full"})`` ->
    ``"Internal error: disk full"``. The reason is ``data`` itself when a string, else the
    first string under ``details`` / ``message`` / ``reason`` / ``error``, else the compact
    JSON of ``data`` (``None`` adds nothing); whitespace folded, at most
    :data:`MAX_REASON` characters. For peers (the official SDKs among them) that answer
    a generic message with the reason only in ``data``."""
    reason = _reason(data)
    return f"{message}: {reason}" if reason and reason not in message else message


def described(exc: BaseException) -> str:
    """What to show a person for ``exc``: ``str(exc)``, and for a :class:`RequestError`
    its message :func:`with_reason` (the peer's reason kept)."""
    if isinstance(exc, RequestError):
        return with_reason(exc.message, exc.data)
    return str(exc)


def _reason(data: Any) -> str:
    if isinstance(data, dict):
        found = next((data[k] for k in _REASON_KEYS if isinstance(data.get(k), str)), None)
        text = found if found is not None else json.dumps(data, ensure_ascii=False, default=str)
    elif isinstance(data, str):
        text = data
    else:
        return ""
    text = " ".join(text.split())
    return text if len(text) <= MAX_REASON else text[: MAX_REASON - 1] + "…"

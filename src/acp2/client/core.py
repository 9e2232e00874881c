"""The :class:`ClientCore`: a client connection's plumbing, and its two internal interfaces.

Internal to :mod:`acp2.client`; callers use :class:`~acp2.client.ClientConnection`.
The link owns the JSON-RPC :class:`~acp2.rpc.Connection` and the live sessions. Both
directions between the connection and a session are spelled out here, and neither side
touches the other's private attributes:

- **what a session may ask of the connection** is the link's public methods:
  :meth:`~ClientCore.call` and :meth:`~ClientCore.notify_nowait` (``ConnectionClosed``
  becomes :class:`~acp2.errors.AgentClosed` with the agent's stderr tail),
  :meth:`~ClientCore.start_soon` and :meth:`~ClientCore.detach`;
- **what the connection feeds a session** is :class:`SessionFeed`: the reader delivers
  each ``session/update`` (updates for ids not known yet are buffered, SS-25), permission
  requests go to the session they name, and the connection going away fails every
  session once.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, Any, Final, Generic, Protocol, TypeVar

import msgspec
from anyio.abc import TaskGroup

from acp2.client.elicitation import (
    CANCEL,
    ElicitationPolicy,
    ElicitationRequest,
    check_request,
    run_policy,
)
from acp2.client.permissions import CANCELLED_OUTCOME
from acp2.diagnose import sanitize
from acp2.errors import AgentClosed, ConnectionClosed, InvalidRequest
from acp2.rpc.guarded import decode
from acp2.rpc.handlers import Decoded, register
from acp2.schema import (
    ClientCapabilities,
    CreateElicitationRequest,
    CreateElicitationResponse,
    ElicitationFormMode,
    ElicitationUrlMode,
    RequestPermissionRequest,
    RequestPermissionResponse,
    SessionUpdate,
)
from acp2.schema.capability_methods import CLIENT as CLIENT_PROMISES
from acp2.schema.capability_methods import promised
from acp2.schema.codec import encode
from acp2.schema.methods import (
    AUTH_STATUS_UPDATE,
    ELICITATION_COMPLETE,
    ELICITATION_CREATE,
    MCP_CONNECT,
    MCP_DISCONNECT,
    MCP_MESSAGE,
    MCP_MESSAGE_NOTIFICATION,
    MCP_NOTIFICATIONS,
    METHODS,
    SESSION_REQUEST_PERMISSION,
    SESSION_UPDATE,
    MethodSpec,
)

if TYPE_CHECKING:  # typing only: the client's start-up imports stay as pinned
    from acp2.client.mcp_host import McpHost
    from acp2.rpc.link import Link

__all__ = ["ClientCore", "SessionFeed", "raw_update", "update_bytes"]

log = logging.getLogger("acp2.client")
P = TypeVar("P")
R = TypeVar("R")

#: Early updates kept per unknown session id, and unknown ids kept (SS-25).
MAX_EARLY_UPDATES: Final = 10_000
MAX_EARLY_SESSIONS: Final = 64
#: How much of the agent's stderr an error message quotes.
STDERR_LINES: Final = 20
STDERR_LINE_CHARS: Final = 400
#: How long a closed connection waits for the agent's stderr to end before it fails the
#: sessions (a dying agent's last words arrive on stderr just after stdout closes).
STDERR_SETTLE: Final = 1.0


class SessionFeed(Protocol):
    """What the connection feeds a session (:class:`~acp2.client.ClientSession` is one)."""

    @property
    def id(self) -> str:
        """The session id updates and permission requests are routed by."""

    def deliver(self, update: Any, raw_params: bytes | None) -> Awaitable[None] | None:
        """Take one update from the reader (``raw_params``: the notification's params
        bytes, or None when the update came as an object alone, from the in-process back
        bridge: see :func:`update_bytes`); an awaitable return is awaited before the next
        message is dispatched."""

    def receive(self, update: Any, raw: bytes) -> None:
        """Take one update whose exact bytes ``raw`` are already cut out (buffered ones)."""

    def fail(self, exc: BaseException) -> None:
        """The connection is gone: every waiter of the session raises ``exc``."""

    async def answer_permission(
        self, params: RequestPermissionRequest
    ) -> RequestPermissionResponse:
        """Serve one ``session/request_permission`` for the session."""

    async def answer_elicitation(
        self, params: ElicitationFormMode | ElicitationUrlMode, policy: ElicitationPolicy
    ) -> CreateElicitationResponse:
        """Serve one session-scoped ``elicitation/create`` with ``policy``."""


S = TypeVar("S", bound=SessionFeed)


# gc=False: see _UpdateNotification below.
class _RawUpdateNotification(msgspec.Struct, rename="camel", gc=False):
    """``session/update`` params with the update kept as its exact bytes."""

    session_id: str
    update: msgspec.Raw


#: The agent's methods a client leaves unanswered on purpose (a notification: ignored).
CLIENT_UNHANDLED: Final[tuple[MethodSpec[Any, Any], ...]] = (AUTH_STATUS_UPDATE,)


# Both notification shapes are untracked by the cycle collector (gc=False): one is made
# per update and dropped once routed, and nothing can refer back to it. A trackable type
# makes the decoder decide for every update whether to track it (~160 instructions).
class _UpdateNotification(msgspec.Struct, rename="camel", gc=False):
    """``session/update`` params decoded in one pass (the hot path)."""

    session_id: str
    update: SessionUpdate


# A decoder made once: ``msgspec.json.decode(..., type=...)`` looks the type up on every
# call, which is a third of this function's cost, once per update when a listener wants
# the raw bytes.
_raw_update_params = msgspec.json.Decoder(_RawUpdateNotification)


def raw_update(raw_params: bytes) -> bytes | None:
    """The exact bytes of the ``update`` inside ``session/update`` params (None, logged,
    when they are malformed)."""
    try:
        return bytes(decode(_raw_update_params, raw_params).update)
    except InvalidRequest as exc:
        log.warning("dropped a malformed session/update: %s", exc.message)
        return None


def update_bytes(update: Any, raw_params: bytes | None) -> bytes | None:
    """The JSON bytes of ``update``: cut from ``raw_params`` (:func:`raw_update`), or,
    when there are none (an update handed over as an object), its encoding."""
    return encode(update) if raw_params is None else raw_update(raw_params)


class ClientCore(Generic[S]):
    """The connection to the agent as the sessions see it (internal to acp2.client).

    ``sessions`` holds the live sessions by id (the same dict
    :attr:`ClientConnection.sessions <acp2.client.ClientConnection>` shows).
    ``elicitation_policy`` answers ``elicitation/create`` (None: refused ``-32602``)
    for the modes ``advertised`` (the capabilities sent in ``initialize``) names.
    """

    elicitation_policy: ElicitationPolicy | None = None
    advertised: ClientCapabilities | None = None
    #: How the agent was reached when it is no process started here (``the remote agent
    #: at URL``): errors then say so instead of pointing at a stderr that does not exist.
    reached: str | None = None
    #: Why the remote link ended, when its transport says (read when it closed).
    why_ended: Callable[[], object] | None = None

    def __init__(
        self,
        connection: Link,
        task_group: TaskGroup,
        *,
        stderr_tail: Callable[[], str] | None = None,
        stderr_done: Callable[[float], Awaitable[object]] | None = None,
    ) -> None:
        self.connection = connection
        self._stderr_done = stderr_done
        self.sessions: dict[str, S] = {}
        self._tg = task_group
        self._stderr_tail = stderr_tail
        self._early: OrderedDict[str, list[tuple[Any, bytes]]] = OrderedDict()
        self._forgotten: set[str] = set()
        self._mcp_host: McpHost | None = None

    def install(self) -> None:
        """Register the client's handlers on the connection (before it is entered)."""
        handlers: dict[MethodSpec[Any, Any], Callable[[Any], Any] | Decoded] = {
            # The update handler also gets the params' exact bytes, and the updates are
            # decoded in one strict pass without the notification's ``_meta``.
            SESSION_UPDATE: Decoded(_UpdateNotification, self._on_update, raw=True),
            SESSION_REQUEST_PERMISSION: self._on_permission,
            ELICITATION_CREATE: self._on_elicitation,
            # Opaque ids, nothing to update: known or not, a completion is ignored (EL-11).
            ELICITATION_COMPLETE: lambda params: None,
            # MCP over ACP: the servers this client hosts (none unless it offered some).
            MCP_CONNECT: lambda params: self.mcp_host.answer_connect(params),
            MCP_MESSAGE: lambda params: self.mcp_host.answer_message(params),
            MCP_DISCONNECT: lambda params: self.mcp_host.answer_disconnect(params),
        }
        register(
            self.connection,
            METHODS,
            "client",
            handlers,
            unhandled=CLIENT_UNHANDLED,
            advertised=promised(self.advertised, CLIENT_PROMISES),
        )
        notes = {MCP_MESSAGE_NOTIFICATION: lambda params: self.mcp_host.take_notification(params)}
        register(self.connection, MCP_NOTIFICATIONS, "client", notes)

    @property
    def mcp_host(self) -> McpHost:
        """The MCP servers this client hosts for the agent (made on first use)."""
        if self._mcp_host is None:
            from acp2.client.mcp_host import McpHost  # loaded by clients that use it only

            self._mcp_host = McpHost(self.connection, self._tg)
        return self._mcp_host

    async def watch(self) -> None:
        """Fail every session with one clear error once the connection closes."""
        await self.connection.wait_closed()
        await self._settle()
        self.fail_sessions()

    def fail_sessions(self) -> None:
        """Fail every live session with :class:`~acp2.errors.AgentClosed` (idempotent: a
        session keeps its first failure). Called by :meth:`watch`, and by the client when
        it leaves the connection, so no waiter outlives it."""
        failure = AgentClosed(self.describe_closed)
        for session in list(self.sessions.values()):
            session.fail(failure)

    # -- the agent's side of the story --------------------------------------------------

    @property
    def closed(self) -> bool:
        """True once the connection is closing or closed."""
        return self.connection.closed

    def stderr_tail(self) -> str:
        """The last lines the agent process wrote to stderr ("" if unknown)."""
        return self._stderr_tail() if self._stderr_tail is not None else ""

    def describe_closed(self) -> str:
        """Explain the closed connection, ending with the last lines of the agent's stderr."""
        conn = self.connection
        text = "The agent closed the connection"
        if conn.close_reason:  # we closed it, because of the agent
            text = f"Closed the connection to the agent: {conn.close_reason}"
        if conn.protocol_errors:
            text += f" (it sent {conn.protocol_errors} invalid message(s); the last: "
            text += f"{sanitize(str(conn.last_protocol_error))})"  # may quote the agent
        if self.reached is not None:
            return self._describe_remote(text)
        lines = sanitize(self.stderr_tail(), newlines=True).strip().splitlines()[-STDERR_LINES:]
        tail = "\n".join(line[-STDERR_LINE_CHARS:] for line in lines)
        if tail:
            return f"{text}; its stderr ended with:\n{tail}"
        return f"{text}; it wrote nothing to stderr (run the agent command by itself to see why)."

    def _describe_remote(self, text: str) -> str:
        """:meth:`describe_closed` for a remote agent: what ended the link, no stderr."""
        where = self.reached or "the remote agent"
        text = text.replace("The agent closed the connection", f"The connection to {where} ended")
        text = text.replace("the connection to the agent", f"the connection to {where}")
        why = self.why_ended() if self.why_ended is not None else None
        if why:
            text += f": {sanitize(str(why))}"
        return f"{text} (the agent runs on the server: its log says more)."

    async def aclose(self) -> None:
        """Close the connection (idempotent)."""
        await self.connection.aclose()

    # -- what a session may ask ---------------------------------------------------------

    async def call(self, spec: MethodSpec[P, R], params: P, *, waiter: Any = None) -> R:
        """Send the request ``spec``; ``ConnectionClosed`` becomes ``AgentClosed`` (raised
        once the agent's stderr has ended, within ``STDERR_SETTLE``). ``waiter``: see
        :meth:`acp2.rpc.Connection.request` (done once the reader dispatched the answer)."""
        try:
            return await self.connection.call(spec, params, waiter=waiter)
        except ConnectionClosed as exc:
            await self._settle()
            raise AgentClosed(self.describe_closed) from exc

    async def request(self, method: str, params: Any, result_type: type[R]) -> R:
        """:meth:`call` for a method outside the table (extension methods)."""
        try:
            return await self.connection.request(method, params, result_type)
        except ConnectionClosed as exc:
            await self._settle()
            raise AgentClosed(self.describe_closed) from exc

    async def _settle(self) -> None:
        if self._stderr_done is not None:
            await self._stderr_done(STDERR_SETTLE)

    def notify_nowait(self, spec: MethodSpec[Any, None] | str, params: Any) -> None:
        """Queue a notification (a table entry, or an extension method's name)."""
        try:
            self.connection.send_notification_nowait(spec, params)
        except ConnectionClosed as exc:
            raise AgentClosed(self.describe_closed) from exc

    def start_soon(self, fn: Callable[..., Coroutine[Any, Any, Any]], *args: Any) -> None:
        """Run ``fn(*args)`` in the connection's task group (ends with the connection)."""
        self._tg.start_soon(fn, *args)

    def attach(self, session: S) -> None:
        """Register ``session`` and feed it the updates that arrived before it (SS-25)."""
        self.sessions[session.id] = session
        self._forgotten.discard(session.id)
        for update, raw in self._early.pop(session.id, ()):
            session.receive(update, raw)

    def detach(self, session: S) -> None:
        """Stop routing to ``session`` (a newer object for its id stays); later updates
        for its id are dropped, not buffered."""
        if self.sessions.get(session.id) is session:
            del self.sessions[session.id]
            self._forgotten.add(session.id)

    # -- handlers -----------------------------------------------------------------------

    def _on_update(
        self, note: _UpdateNotification, raw_params: bytes | None
    ) -> Awaitable[None] | None:
        # A plain function: the reader calls it inline, no coroutine per update.
        session = self.sessions.get(note.session_id)
        if session is not None:
            return session.deliver(note.update, raw_params)
        if note.session_id not in self._forgotten:
            raw = update_bytes(note.update, raw_params)
            if raw is not None:
                self._buffer(note.session_id, note.update, raw)
        return None

    def feed(self, session_id: str, update: Any) -> Awaitable[None] | None:
        """Take one update of ``session_id`` handed over as an object alone, as the
        reader hands over a ``session/update`` (the in-process back bridge's lifted
        updates, :mod:`acp2.bridge.back_send`: no notification object, no bytes; it is
        encoded only for a listener or the early-update buffer). The object must be
        the caller's to give away. An awaitable return is awaited before the next."""
        session = self.sessions.get(session_id)
        if session is not None:
            return session.deliver(update, None)
        if session_id not in self._forgotten:
            self._buffer(session_id, update, encode(update))
        return None

    def _buffer(self, session_id: str, update: Any, raw: bytes) -> None:
        early = self._early.get(session_id)
        if early is None:
            if len(self._early) >= MAX_EARLY_SESSIONS:
                self._early.popitem(last=False)
            early = self._early[session_id] = []
        if len(early) < MAX_EARLY_UPDATES:
            early.append((update, raw))

    async def _on_permission(self, params: RequestPermissionRequest) -> RequestPermissionResponse:
        session = self.sessions.get(params.session_id)
        if session is None:
            log.warning("permission request for unknown session %s: declined", params.session_id)
            return CANCELLED_OUTCOME
        return await session.answer_permission(params)

    async def _on_elicitation(self, params: CreateElicitationRequest) -> CreateElicitationResponse:
        request = check_request(params, self.advertised if self.elicitation_policy else None)
        policy = self.elicitation_policy
        assert policy is not None  # check_request refuses every mode without a policy
        if not isinstance(request.session_id, str):
            return await run_policy(policy, ElicitationRequest(None, request))
        session = self.sessions.get(request.session_id)
        if session is None:
            log.warning("elicitation for unknown session %s: cancelled", request.session_id)
            return CANCEL
        return await session.answer_elicitation(request, policy)

"""The agent side of one connection: initialize, auth, routing, and the prompt lifecycle.

Session management (new / list / resume / close / delete / config) lives in
:mod:`acp2.agent.sessions`; this module owns ``initialize``, ``auth/*``, extension
methods, ``session/prompt`` and ``session/cancel``, and starts each turn with
:func:`acp2.agent.runner.run_turn`: response on insertion carrying the ``messageId``
(valid under both drafts), ``user_message`` with the same id, ``running``, the handler's
output, and exactly one ``idle`` with a stop reason. Every handler is registered from the
method table (:mod:`acp2.schema.methods`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from functools import partial
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import anyio
from anyio.abc import TaskGroup
from msgspec import Raw

from acp2 import _aio
from acp2.agent import archiving, forking, providers, steering
from acp2.agent.attach_handler import attach
from acp2.agent.bindings import Binding, bind
from acp2.agent.capabilities import (
    build_initialize_response,
    check_prompt,
    runs_terminal_login,
)
from acp2.agent.context import TurnContext
from acp2.agent.dedupe import KeyedPrompt, exit_after_insert_for_tests
from acp2.agent.elicit import advertises
from acp2.agent.runner import WorkHandler, run_turn
from acp2.agent.runtime import AgentRuntime, runtime_for
from acp2.agent.served import advertised, unhandled
from acp2.agent.session import AgentSession
from acp2.agent.sessions import SessionManager
from acp2.agent.turn import Turn
from acp2.errors import (
    AuthRequired,
    HistoryWriteError,
    InvalidParams,
    InvalidRequest,
    MethodNotFound,
)
from acp2.rpc import Connection
from acp2.rpc.handlers import register
from acp2.rpc.link import Link
from acp2.schema import (
    CancelledPermissionOutcome,
    CancelSessionNotification,
    CancelTerminalRequest,
    CancelTerminalResponse,
    CancelToolCallRequest,
    CancelToolCallResponse,
    ClientCapabilities,
    CompleteElicitationNotification,
    CreateElicitationRequest,
    CreateElicitationResponse,
    ElicitationCancelAction,
    ElicitationUrlMode,
    InitializeRequest,
    InitializeResponse,
    LoginAuthRequest,
    LoginAuthResponse,
    LogoutAuthRequest,
    LogoutAuthResponse,
    PromptRequest,
    PromptResponse,
    RequestPermissionRequest,
    RequestPermissionResponse,
    UserMessage,
)
from acp2.schema.extensions import EXTENSIONS, SESSION_ATTACH
from acp2.schema.methods import (
    AUTH_LOGIN,
    AUTH_LOGOUT,
    ELICITATION_COMPLETE,
    ELICITATION_CREATE,
    INITIALIZE,
    MCP_MESSAGE,
    MCP_MESSAGE_NOTIFICATION,
    MCP_NOTIFICATIONS,
    METHODS,
    SESSION_CANCEL,
    SESSION_PROMPT,
    SESSION_REQUEST_PERMISSION,
    TERMINAL_CANCEL,
    TOOL_CALL_CANCEL,
)
from acp2.transport.base import Transport

if TYPE_CHECKING:
    from acp2.agent.settings import AgentSettings as Agent

__all__ = ["AgentConnection", "serve_connection", "serve_link"]

log = logging.getLogger("acp2.agent")

#: The answer to a permission request nobody is left to answer.
CANCELLED_PERMISSION = RequestPermissionResponse(outcome=CancelledPermissionOutcome())

P = TypeVar("P")
R = TypeVar("R")


async def serve_connection(
    agent: Agent,
    transport: Transport,
    *,
    principal: object = None,
    initialized: InitializeRequest | None = None,
) -> None:
    """Serve ``agent`` on one transport until the peer goes away; cancel its work then.

    ``principal`` is who the server says the client is (e.g. from its bearer token):
    by default a connection may attach only to sessions made live by a connection of an
    equal principal (:mod:`acp2.agent.session_hub`). Work of a session other clients still
    hold is not cancelled: this call returns once it has ended. ``initialized``: an
    ``initialize`` request already answered on this transport (:mod:`acp2.agent.early`);
    the connection starts as if it had answered it.
    """
    store = runtime_for(agent).store  # opened before the first message is read
    async with Connection(transport, name="client") as conn:
        await serve_link(agent, conn, principal=principal, initialized=initialized)
    with contextlib.suppress(HistoryWriteError):  # logged by the flush; still queued:
        store.flush()  # a later flush, or the exit (acp2.store.failures), reports it


async def serve_link(
    agent: Agent,
    conn: Link,
    *,
    principal: object = None,
    initialized: InitializeRequest | None = None,
) -> None:
    """:func:`serve_connection` on an entered connection, or on an in-process stand-in
    that offers the same methods (:class:`acp2.bridge.inprocess.InProcessEnd`, the front
    bridge's link); returns once it has closed and this connection's work has ended
    (cancelled, and its history committed) -- but for work other clients still hold."""
    runtime = runtime_for(agent)
    async with anyio.create_task_group() as tg:
        conn.add_flush_hook(runtime.store.flush)
        served = AgentConnection(agent, conn, tg, runtime, principal=principal)
        if initialized is not None:
            served.accept_initialize(initialized)
        served.register()
        try:
            await conn.wait_closed()
            served.sessions.leave_connection()  # shields the work other clients still watch
        finally:
            tg.cancel_scope.cancel()
            served.turns.cancel(spare=served.shielded_turns())
            await served.turns.wait()
    # What the cancelled work produced before the close: no write will commit it now. A
    # store that cannot take it keeps it queued (logged by the flush); the exit counts it.
    with contextlib.suppress(HistoryWriteError):
        runtime.store.flush()


class AgentConnection:
    """Everything the agent keeps for one client connection (one per connection: it is
    not a server). ``runtime`` is the state shared with the Agent's other connections."""

    def __init__(
        self,
        agent: Agent,
        connection: Link,
        task_group: TaskGroup,
        runtime: AgentRuntime | None = None,
        *,
        principal: object = None,
    ) -> None:
        self.agent = agent
        self.connection = connection
        self.task_group = task_group
        # Turns run as plain tasks, cancelled with the connection like the group's
        # children: anyio's start_soon costs ~15-20 µs of every prompt (issue 16).
        self.turns = _aio.Tasks(_turn_failed)
        self.runtime = runtime if runtime is not None else runtime_for(agent)
        self.initialized = False
        self.client_capabilities: ClientCapabilities | None = None
        self.logged_in = not agent.auth_methods or any(
            m.ready is not None and m.ready() for m in agent.auth_methods
        )
        self.sessions = SessionManager(
            agent,
            self.runtime,
            connection,
            task_group,
            start_work=self.start_work,
            principal=principal,
            capabilities=lambda: self.client_capabilities,
        )

    def shielded_turns(self) -> set[asyncio.Task[Any]]:
        """The tasks of turns this connection started that other clients still watch
        (their hubs shielded them when it left): its end must not cancel them."""
        found: set[asyncio.Task[Any]] = set()
        for hub in self.runtime.hubs.values():
            task = hub.shielded_work(self.connection)
            if task is not None:
                found.add(task)
        return found

    # -- wiring -------------------------------------------------------------------

    def bindings(self) -> list[Binding]:
        """Every method this connection serves, each from the method table."""
        guard = self.guarded
        bindings = [bind(INITIALIZE, self.on_initialize)]
        if self.agent.auth_methods:
            bindings.append(bind(AUTH_LOGIN, guard(self.on_login, auth=False)))
            bindings.append(bind(AUTH_LOGOUT, guard(self.on_logout, auth=False)))
        bindings += [Binding(r.spec, guard(r.handler)) for r in self.sessions.bindings()]
        bindings += [Binding(r.spec, guard(r.handler)) for r in forking.bindings(self.sessions)]
        bindings += [Binding(r.spec, guard(r.handler)) for r in archiving.bindings(self.sessions)]
        hosted = providers.bindings(self.agent.providers, lambda: self.sessions.owner)
        bindings += [Binding(r.spec, guard(r.handler)) for r in hosted]
        bindings += [Binding(r.spec, guard(r.handler)) for r in steering.bindings(self.sessions)]
        bindings.append(bind(SESSION_PROMPT, guard(self.on_prompt)))
        bindings.append(bind(SESSION_CANCEL, self.on_cancel))
        bindings.append(bind(TOOL_CALL_CANCEL, guard(self.on_cancel_tool_call)))
        bindings.append(bind(TERMINAL_CANCEL, guard(self.on_cancel_terminal)))
        if self.agent.attach:
            bindings.append(bind(SESSION_ATTACH, guard(partial(attach, self.sessions))))
        if self.sessions.mcp_acp is not None:
            bindings.append(bind(MCP_MESSAGE, guard(self.sessions.mcp_acp.answer_message)))
        return bindings

    def register(self) -> None:
        """Install every handler on the connection from the method table, and start the
        session bookkeeping. Raises :class:`~acp2.errors.MissingHandler` (nothing served)
        when the handlers do not cover the client's methods or what the agent advertises."""
        register(
            self.connection,
            METHODS | EXTENSIONS,  # the spec's methods and acp2's own
            "agent",
            {entry.spec: entry.handler for entry in self.bindings()},
            unhandled=unhandled(self.agent),
            advertised=advertised(self.agent),
        )
        if self.sessions.mcp_acp is not None:  # mcp/message is also a notification
            notes = {MCP_MESSAGE_NOTIFICATION: self.sessions.mcp_acp.take_notification}
            register(self.connection, MCP_NOTIFICATIONS, "agent", notes)
        self.connection.on_unknown_request(self.on_ext_request)
        self.connection.on_unknown_notification(self.on_ext_notification)
        self.sessions.start()

    def guarded(
        self, handler: Callable[[P], Awaitable[R]], *, auth: bool = True
    ) -> Callable[[P], Awaitable[R]]:
        """Wrap a handler: initialize first (IN-01), and login first when auth is configured.

        A plain function returning the handler's awaitable: no coroutine of its own and
        no ``try`` per request. A failure of the history store needs no mapping here: the
        store raises :class:`~acp2.errors.StoreUnusable` itself, naming the store and the
        reason (:mod:`acp2.store.failures`)."""

        def run(params: P) -> Awaitable[R]:
            """Check the gates, then start the handler."""
            if not self.initialized:
                raise InvalidRequest("Send initialize before any other request")
            if auth and not self.logged_in:
                raise AuthRequired("Log in with auth/login first")
            return handler(params)

        return run

    # -- initialize and auth --------------------------------------------------------

    async def on_initialize(self, params: InitializeRequest) -> InitializeResponse:
        """Answer with protocol version 2 (whatever was requested: never an error), our info
        and the capabilities derived from the configuration (IN-03, IN-04)."""
        self.accept_initialize(params)
        return build_initialize_response(self.agent, terminal_auth=runs_terminal_login(params))

    def accept_initialize(self, params: InitializeRequest) -> None:
        """Record an answered ``initialize``: the client's capabilities; other requests
        are served from now on."""
        self.client_capabilities = params.capabilities
        self.initialized = True

    async def on_login(self, params: LoginAuthRequest) -> LoginAuthResponse:
        """Run the login of an advertised ``agent`` auth method (AU-04)."""
        for method in self.agent.auth_methods:
            if method.method_id == params.method_id:
                await method.login()
                self.logged_in = True
                return LoginAuthResponse()
        raise InvalidParams(f"Unknown auth method: {params.method_id}")

    async def on_logout(self, params: LogoutAuthRequest) -> LogoutAuthResponse:
        """Forget the login; gated requests need a new one (AU-09)."""
        self.logged_in = False
        return LogoutAuthResponse()

    # -- extensions ---------------------------------------------------------------------

    async def on_ext_request(self, method: str, params: Raw | None) -> Any:
        """Dispatch a ``_`` extension request; anything unknown is -32601 (EX-04, TR-11)."""
        handler = self.agent.ext_requests.get(method)
        if handler is None:
            raise MethodNotFound(f"Method not found: {method}")
        if not self.initialized:
            raise InvalidRequest("Send initialize before any other request")
        return await handler(params)

    async def on_ext_notification(self, method: str, params: Raw | None) -> None:
        """Dispatch a ``_`` extension notification; unknown ones are ignored (EX-04)."""
        handler = self.agent.ext_notifications.get(method)
        if handler is not None:
            await handler(params)

    # -- the prompt lifecycle ------------------------------------------------------------

    async def on_prompt(self, params: PromptRequest) -> PromptResponse:
        """Accept a prompt: check it, wait for its slot, insert it, answer with its id.

        A prompt with an ``idempotencyKey`` is inserted at most once per key: a retry is
        answered with the first attempt's response and starts nothing (acp2.agent.dedupe).

        The turn itself runs in its own task, started here so that it cannot write before
        this response (docs/internals.md): the client sees the response, then
        ``user_message`` with the same ``messageId``, then ``running`` (PL-03, PL-04, PL-06).
        """
        session = self.sessions.live(params.session_id)
        self.sessions.require_controller(session.id, "prompt")
        check_prompt(self.agent, params.prompt)
        keyed = KeyedPrompt.of(self.runtime.store, params)
        if keyed is not None and (earlier := keyed.earlier()) is not None:
            return self._answer_retry(session, earlier)  # inserted once already
        held = await session.acquire()
        if held and keyed is not None and (earlier := keyed.earlier()) is not None:
            session.release()  # another attempt of this key was inserted while we waited
            return self._answer_retry(session, earlier)
        message_id = session.new_message_id("user")
        user_message = UserMessage(message_id=message_id, content=list(params.prompt))
        frame = session.emitter.record_frame(user_message)
        del user_message  # the frame has it; its row in history is a view of the frame
        response = PromptResponse(message_id=message_id)
        if keyed is not None:
            keyed.remember(response)  # committed with the user message, in one transaction
            exit_after_insert_for_tests(self.runtime.store)
        turn = Turn(self._context(session), params.prompt, message_id)
        self._begin(session, turn, frame, self.agent.prompt_handler)
        return response

    def _answer_retry(self, session: AgentSession, earlier: PromptResponse) -> PromptResponse:
        """Answer a retried key with its first response, then send the session's state.

        No work starts for a retry, so the snapshot (after the response) is what ends the
        client's wait for it: ``idle`` when the first attempt's work is over, else
        ``running`` and that work's own ``idle`` later (D-14: states are snapshots).
        """

        async def snapshot() -> None:
            """Send the current state (started after the response is queued)."""
            session.emitter.emit(session.snapshot())

        self.task_group.start_soon(snapshot)
        return earlier

    async def on_cancel(self, params: CancelSessionNotification) -> None:
        """Cancel the session's foreground work and withdraw held prompts (PL-18); a child
        session only when it was announced cancellable (else ignored: a notification)."""
        session = self.sessions.find(params.session_id)
        if session is None or (session.parent is not None and not session.cancellable):
            return  # a child announced not cancellable: a notification has no refusal
        if self.sessions.role(session.id) == "observer":
            # A notification has no answer to refuse it with: it is ignored (logged).
            log.info("session/cancel from an observer of %s ignored", session.id)
            return
        session.cancel()

    async def on_cancel_tool_call(self, params: CancelToolCallRequest) -> CancelToolCallResponse:
        """Accept ``tool_call/cancel`` for a call that advertises ``cancel`` (TC-13): its
        owner is told, and the call's final update confirms it later. ``-32602`` for an
        unknown, final or not cancellable call; the foreground state does not change."""
        session = self.sessions.live(params.session_id)
        session.background.request_cancel("tool_call", params.tool_call_id)
        return CancelToolCallResponse()

    async def on_cancel_terminal(self, params: CancelTerminalRequest) -> CancelTerminalResponse:
        """Accept ``terminal/cancel`` for a terminal that advertises ``cancel`` (TM-10);
        its exit status confirms it later. ``-32602`` as for tool calls."""
        session = self.sessions.live(params.session_id)
        session.background.request_cancel("terminal", params.terminal_id)
        return CancelTerminalResponse()

    async def start_work(self, session: AgentSession, handler: WorkHandler) -> None:
        """Start agent-initiated foreground work (no prompt, no user message; PL-24)."""
        await session.acquire()
        self._begin(session, Turn(self._context(session), [], None), None, handler)

    async def ask_permission(self, request: RequestPermissionRequest) -> RequestPermissionResponse:
        """Send ``request`` to the session's controllers; the answer that counts
        (:meth:`acp2.agent.session_hub.SessionHub.ask`: with one client, simply its answer)."""
        hub = self.runtime.hubs.get(request.session_id)
        if hub is None:
            return await self.connection.call(SESSION_REQUEST_PERMISSION, request)
        return await hub.ask(SESSION_REQUEST_PERMISSION, request, CANCELLED_PERMISSION)

    async def elicit(self, request: CreateElicitationRequest) -> CreateElicitationResponse:
        """Send ``elicitation/create`` to the session's controllers that advertised its
        mode; the answer that counts (``cancel`` when there is nobody to ask)."""
        session_id = getattr(request, "session_id", None)
        hub = self.runtime.hubs.get(session_id) if isinstance(session_id, str) else None
        if hub is None:
            return await self.connection.call(ELICITATION_CREATE, request)
        mode: Literal["form", "url"] = "url" if isinstance(request, ElicitationUrlMode) else "form"
        return await hub.ask(
            ELICITATION_CREATE,
            request,
            ElicitationCancelAction(),
            lambda member: advertises(member.capabilities(), mode),
        )

    def _completer(self, session: AgentSession) -> Callable[[str], Awaitable[None]]:
        async def complete(elicitation_id: str) -> None:
            """Tell the controllers the URL elicitation finished (EL-11)."""
            params = CompleteElicitationNotification(elicitation_id=elicitation_id)
            hub = self.sessions.hub(session)
            if hub is None:
                await self.connection.notify(ELICITATION_COMPLETE, params)
            else:
                await hub.notify_controllers(ELICITATION_COMPLETE, params)

        return complete

    def _capabilities(self, session: AgentSession) -> ClientCapabilities | None:
        hub = self.sessions.hub(session)
        return self.client_capabilities if hub is None else hub.capabilities(self.connection)

    def _context(self, session: AgentSession) -> TurnContext:
        return TurnContext(
            session,
            session.emitter,
            self.ask_permission,
            self.elicit,
            self._completer(session),
            lambda: self._capabilities(session),
        )

    def _begin(
        self, session: AgentSession, turn: Turn, user_frame: bytes | None, body: WorkHandler | None
    ) -> None:
        """Make ``turn`` the session's current work and start it in its own task."""
        session.begin(turn)
        hub = self.sessions.hub(session)
        work = run_turn(session, turn, user_frame, body)
        # A plain task either way (anyio's start_soon cost ~15 us of every prompt); with a
        # hub, hosted by it: spared by this connection's end while other clients watch.
        self.turns.spawn(work if hub is None else hub.host(self.connection, work))
        # The response and the turn's first updates then share one write (ledger 10).
        self.connection.coalesce_output()


def _turn_failed(exc: BaseException) -> None:
    # run_turn logs and absorbs its own failures: this is a bug in the runtime itself.
    log.error("a turn task failed", exc_info=exc)

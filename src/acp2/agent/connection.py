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

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
from anyio.abc import TaskGroup
from msgspec import Raw

from acp2 import _aio
from acp2.agent.capabilities import build_initialize_response, check_prompt
from acp2.agent.context import TurnContext
from acp2.agent.dedupe import KeyedPrompt, exit_after_insert_for_tests
from acp2.agent.routes import Route, route
from acp2.agent.runner import WorkHandler, run_turn
from acp2.agent.runtime import AgentRuntime, runtime_for
from acp2.agent.session import AgentSession
from acp2.agent.sessions import SessionManager
from acp2.agent.turn import Turn
from acp2.errors import AuthRequired, InvalidParams, InvalidRequest, MethodNotFound
from acp2.rpc import Connection
from acp2.schema import (
    CancelSessionNotification,
    ClientCapabilities,
    CompleteElicitationNotification,
    CreateElicitationRequest,
    CreateElicitationResponse,
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
    StateUpdate,
    UserMessage,
)
from acp2.schema.methods import (
    AUTH_LOGIN,
    AUTH_LOGOUT,
    ELICITATION_COMPLETE,
    ELICITATION_CREATE,
    INITIALIZE,
    SESSION_CANCEL,
    SESSION_PROMPT,
    SESSION_REQUEST_PERMISSION,
)
from acp2.transport.base import Transport

if TYPE_CHECKING:
    from acp2.agent.settings import AgentSettings as Agent

__all__ = ["AgentConnection", "serve_connection"]

log = logging.getLogger("acp2.agent")

P = TypeVar("P")
R = TypeVar("R")


async def serve_connection(
    agent: Agent, transport: Transport, *, initialized: InitializeRequest | None = None
) -> None:
    """Serve ``agent`` on one transport until the peer goes away; cancel its work then.

    ``initialized``: an ``initialize`` request already answered on this transport
    (:mod:`acp2.agent.early`); the connection starts as if it had answered it."""
    runtime = runtime_for(agent)
    store = runtime.store
    async with Connection(transport, name="client") as conn, anyio.create_task_group() as tg:
        conn.add_flush_hook(store.flush)
        served = AgentConnection(agent, conn, tg, runtime)
        if initialized is not None:
            served.accept_initialize(initialized)
        served.register()
        try:
            await conn.wait_closed()
        finally:
            tg.cancel_scope.cancel()
            served.turns.cancel()
            await served.turns.wait()
    store.flush()


class AgentConnection:
    """Everything the agent keeps for one client connection (one per connection: it is
    not a server). ``runtime`` is the state shared with the Agent's other connections."""

    def __init__(
        self,
        agent: Agent,
        connection: Connection,
        task_group: TaskGroup,
        runtime: AgentRuntime | None = None,
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
        self.logged_in = not agent.auth_methods
        self.sessions = SessionManager(
            agent, self.runtime, connection, task_group, start_work=self.start_work
        )

    # -- wiring -------------------------------------------------------------------

    def routes(self) -> list[Route]:
        """Every method this connection serves, each from the method table."""
        guard = self.guarded
        routes = [route(INITIALIZE, self.on_initialize)]
        if self.agent.auth_methods:
            routes.append(route(AUTH_LOGIN, guard(self.on_login, auth=False)))
            routes.append(route(AUTH_LOGOUT, guard(self.on_logout, auth=False)))
        routes += [Route(r.spec, guard(r.handler)) for r in self.sessions.routes()]
        routes.append(route(SESSION_PROMPT, guard(self.on_prompt)))
        routes.append(route(SESSION_CANCEL, self.on_cancel))
        return routes

    def register(self) -> None:
        """Install every handler on the connection, and start the session bookkeeping."""
        for entry in self.routes():
            self.connection.on(entry.spec, entry.handler)
        self.connection.on_unknown_request(self.on_ext_request)
        self.connection.on_unknown_notification(self.on_ext_notification)
        self.sessions.start()

    def guarded(
        self, handler: Callable[[P], Awaitable[R]], *, auth: bool = True
    ) -> Callable[[P], Awaitable[R]]:
        """Wrap a handler: initialize first (IN-01), and login first when auth is configured."""

        async def run(params: P) -> R:
            """Check the gates, then run the handler."""
            if not self.initialized:
                raise InvalidRequest("Send initialize before any other request")
            if auth and not self.logged_in:
                raise AuthRequired("Log in with auth/login first")
            return await handler(params)

        return run

    # -- initialize and auth --------------------------------------------------------

    async def on_initialize(self, params: InitializeRequest) -> InitializeResponse:
        """Answer with protocol version 2 (whatever was requested: never an error), our info
        and the capabilities derived from the configuration (IN-03, IN-04)."""
        self.accept_initialize(params)
        return build_initialize_response(self.agent)

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
            session.emitter.emit(StateUpdate(state=session.state))

        self.task_group.start_soon(snapshot)
        return earlier

    async def on_cancel(self, params: CancelSessionNotification) -> None:
        """Cancel the session's foreground work and withdraw held prompts (PL-18)."""
        session = self.sessions.find(params.session_id)
        if session is not None:
            session.cancel()

    async def start_work(self, session: AgentSession, handler: WorkHandler) -> None:
        """Start agent-initiated foreground work (no prompt, no user message; PL-24)."""
        await session.acquire()
        self._begin(session, Turn(self._context(session), [], None), None, handler)

    async def ask_permission(self, request: RequestPermissionRequest) -> RequestPermissionResponse:
        """Send ``request`` to the client and return its answer."""
        return await self.connection.call(SESSION_REQUEST_PERMISSION, request)

    async def elicit(self, request: CreateElicitationRequest) -> CreateElicitationResponse:
        """Send ``elicitation/create`` to the client and return its answer."""
        return await self.connection.call(ELICITATION_CREATE, request)

    async def complete_elicitation(self, elicitation_id: str) -> None:
        """Tell the client the URL elicitation ``elicitation_id`` finished (EL-11)."""
        params = CompleteElicitationNotification(elicitation_id=elicitation_id)
        await self.connection.notify(ELICITATION_COMPLETE, params)

    def _context(self, session: AgentSession) -> TurnContext:
        return TurnContext(
            session,
            session.emitter,
            self.ask_permission,
            self.elicit,
            self.complete_elicitation,
            lambda: self.client_capabilities,
        )

    def _begin(
        self, session: AgentSession, turn: Turn, user_frame: bytes | None, body: WorkHandler | None
    ) -> None:
        """Make ``turn`` the session's current work and start it in its own task."""
        session.begin(turn)
        self.turns.spawn(run_turn(session, turn, user_frame, body))
        # The response and the turn's first updates then share one write (ledger 10).
        self.connection.coalesce_output()


def _turn_failed(exc: BaseException) -> None:
    # run_turn logs and absorbs its own failures: this is a bug in the runtime itself.
    log.error("a turn task failed", exc_info=exc)

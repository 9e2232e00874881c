"""The agent side of one connection: initialize, auth, routing, and the prompt lifecycle.

Session management (new / list / resume / close / delete / config) lives in
:mod:`acp2.agent.sessions`; this module owns ``initialize``, ``auth/*``, extension
methods, ``session/prompt`` and ``session/cancel`` and the turn runner that guarantees
the lifecycle: response on insertion carrying the ``messageId`` (valid under both drafts),
``user_message`` with the same id, ``running``, the handler's output, and exactly one
``idle`` with a stop reason -- ``cancelled`` after ``session/cancel``, ``error`` (with an
``error`` object and a readable agent message) when the handler raises.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
from anyio.abc import TaskGroup
from msgspec import Raw

from acp2.agent.app import Agent
from acp2.agent.capabilities import build_initialize_response, check_prompt
from acp2.agent.session import AgentSession
from acp2.agent.sessions import SessionManager
from acp2.agent.turn import Turn
from acp2.errors import (
    AuthRequired,
    ConnectionClosed,
    InvalidParams,
    InvalidRequest,
    MethodNotFound,
    summarize,
)
from acp2.rpc import Connection
from acp2.schema import (
    CancelSessionNotification,
    Error,
    InitializeRequest,
    InitializeResponse,
    LoginAuthRequest,
    LoginAuthResponse,
    LogoutAuthRequest,
    LogoutAuthResponse,
    PromptRequest,
    PromptResponse,
    TextContent,
    UserMessage,
)
from acp2.transport.base import Transport

__all__ = ["AgentServer", "serve_connection"]

log = logging.getLogger("acp2.agent")


async def serve_connection(agent: Agent, transport: Transport) -> None:
    """Serve ``agent`` on one transport until the peer goes away; cancel its work then."""
    store = agent.history()
    async with Connection(transport, name="client") as conn, anyio.create_task_group() as tg:
        conn.add_flush_hook(store.flush)
        server = AgentServer(agent, conn, tg)
        server.register()
        await conn.wait_closed()
        tg.cancel_scope.cancel()
    store.flush()


class AgentServer:
    """Everything the agent keeps for one client connection."""

    def __init__(self, agent: Agent, connection: Connection, task_group: TaskGroup) -> None:
        self.agent = agent
        self.connection = connection
        self.task_group = task_group
        self.store = agent.history()
        self.initialized = False
        self.client_capabilities: Any = None
        self.logged_in = not agent.auth_methods
        self.sessions = SessionManager(self)

    # -- wiring -------------------------------------------------------------------

    def register(self) -> None:
        """Install every handler on the connection."""
        on = self.connection.on_request
        on("initialize", InitializeRequest, self.on_initialize)
        if self.agent.auth_methods:
            on("auth/login", LoginAuthRequest, self.guarded(self.on_login, auth=False))
            on("auth/logout", LogoutAuthRequest, self.guarded(self.on_logout, auth=False))
        self.sessions.register()
        on("session/prompt", PromptRequest, self.guarded(self.on_prompt))
        self.connection.on_notification("session/cancel", CancelSessionNotification, self.on_cancel)
        self.connection.on_unknown_request(self.on_ext_request)
        self.connection.on_unknown_notification(self.on_ext_notification)

    def guarded(
        self, handler: Callable[[Any], Awaitable[Any]], *, auth: bool = True
    ) -> Callable[[Any], Awaitable[Any]]:
        """Wrap a handler: initialize first (IN-01), and login first when auth is configured."""

        async def run(params: Any) -> Any:
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
        self.client_capabilities = params.capabilities
        self.initialized = True
        return build_initialize_response(self.agent)

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

        The turn itself runs in its own task, started here so that it cannot write before
        this response (docs/internals.md): the client sees the response, then
        ``user_message`` with the same ``messageId``, then ``running`` (PL-03, PL-04, PL-06).
        """
        session = self.sessions.live(params.session_id)
        check_prompt(self.agent, params.prompt)
        await session.acquire()
        message_id = session.new_message_id("user")
        user_message = UserMessage(message_id=message_id, content=list(params.prompt))
        frame = session.emitter.record_frame(user_message)
        del user_message  # the frame has it; its row in history is a view of the frame
        self._begin(session, Turn(self, session, params.prompt, message_id), frame)
        return PromptResponse(message_id=message_id)

    async def on_cancel(self, params: CancelSessionNotification) -> None:
        """Cancel the session's foreground work and withdraw held prompts (PL-18)."""
        session = self.sessions.find(params.session_id)
        if session is not None:
            session.cancel()

    async def start_work(
        self, session: AgentSession, handler: Callable[[Turn], Awaitable[str | None]]
    ) -> None:
        """Start agent-initiated foreground work (no prompt, no user message; PL-24)."""
        await session.acquire()
        self._begin(session, Turn(self, session, [], None), None, handler)

    def _begin(
        self,
        session: AgentSession,
        turn: Turn,
        user_frame: bytes | None,
        handler: Callable[[Turn], Awaitable[str | None]] | None = None,
    ) -> None:
        """Make ``turn`` the session's current work and start it in its own task."""
        session.turn = turn
        self.task_group.start_soon(self.run_turn, session, turn, user_frame, handler)
        # The response and the turn's first updates then share one write (ledger 10).
        self.connection.coalesce_output()

    async def run_turn(
        self,
        session: AgentSession,
        turn: Turn,
        user_frame: bytes | None,
        handler: Callable[[Turn], Awaitable[str | None]] | None = None,
    ) -> None:
        """Run one piece of foreground work from ``running`` to its single ``idle``;
        ``user_frame`` is the ``user_message`` frame of a prompt (already recorded).

        Never raises (but for cancellation of the whole connection): a failure of the
        runtime itself is logged and still ends the work ``idle`` / ``error`` if it can.
        """
        body = handler or self.agent.prompt_handler
        try:
            if user_frame is not None:
                session.emitter.send_frame(user_frame)
                del user_frame  # the outbox holds it until written
            session.report("start")
            if body is None:
                reason, failure = "end_turn", None
            else:
                reason, failure = await session.run_work(lambda: body(turn))
            await self._finish(session, turn, reason, failure)
        except ConnectionClosed:
            log.debug("connection closed during a turn of %s", session.id)
        except Exception as exc:
            log.exception("the agent runtime failed during a turn of %s", session.id)
            _force_idle(session, exc)
        finally:
            session.release()

    async def _finish(
        self, session: AgentSession, turn: Turn, reason: str, failure: BaseException | None
    ) -> None:
        if isinstance(failure, ConnectionClosed):
            log.debug("connection closed during a turn of %s", session.id)
            return
        fields: dict[str, Any] = {"stop_reason": reason}
        if reason == "cancelled" or failure is not None:
            # PL-20: final tool-call statuses go out before the idle that ends the work.
            for call in turn.unfinished_tool_calls():
                await (call.cancel() if failure is None else call.fail())
        if failure is not None:
            summary = summarize(failure)
            log.error("prompt handler failed in %s", session.id, exc_info=failure)
            turn.new_message()
            await turn.message([TextContent(text=f"The agent failed: {summary}")])
            fields["error"] = Error(code=-32603, message=summary)
        session.report("stop", **fields)


def _force_idle(session: AgentSession, exc: Exception) -> None:
    """After a runtime failure, end the work ``idle`` / ``error`` unless already idle."""
    if session.state == "idle":
        return
    error = Error(code=-32603, message=summarize(exc))
    try:
        session.report("stop", stop_reason="error", error=error)
    except Exception:
        log.exception("could not report idle for %s", session.id)

"""The back bridge: a v1 agent presented as a v2 agent.

Two links and the pure translation of :mod:`acp2.compat.v1` between them: ``agent``
speaks v1 to the agent (its ``initialize`` already answered), and ``client`` faces
whoever drives it as a v2 agent: a JSON-RPC connection to a v2 client on stdio
(``acp2 bridge -- V1_AGENT``, :func:`serve_back_transports`), or, for acp2's own
client in this process, one end of :func:`acp2.bridge.inprocess.inprocess_pair` (its requests
are the handlers here awaited, the lifted updates are handed over as objects). The v2
side sees a v2 agent:

- ``initialize`` is answered from the v1 result (protocol version 2);
- ``session/new`` / ``resume`` (``replayFrom: start`` -> v1 ``session/load``) /
  ``list`` / ``close`` / ``set_config_option`` are translated both ways;
- ``session/prompt`` is accepted at once (with the user message's new ``messageId``);
  then ``user_message``, ``running``, the lifted v1 updates and ``idle`` with the v1
  answer's stop reason follow (a v1 error answer -> ``idle`` with stop reason ``error``).
  A v1 agent takes one prompt at a time, so a prompt sent while one runs is held (v2's
  held prompt, D-11) until the running v1 prompt is answered; ``session/cancel`` /
  ``session/close`` withdraw the held prompts with ``-32800``;
- v1 ``session/request_permission`` goes to the v2 client and its answer back;
  ``fs/read_text_file`` / ``fs/write_text_file`` (:mod:`acp2.bridge.back_fs`) and
  ``terminal/*`` (:mod:`acp2.bridge.back_terminal`) are served here when enabled, else
  answered ``-32601``.

One :class:`~acp2.compat.v1.lift.V1Lifter` per session keeps the per-session state.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any, Final

import anyio
from anyio.abc import TaskGroup
from msgspec import UNSET

import acp2.compat.v1.lift_params as hot
import acp2.compat.v1.methods as v1m
import acp2.compat.v1.schema as v1
import acp2.schema as v2
import acp2.schema.methods as v2m
from acp2 import _aio
from acp2.bridge.back_fs import FileService
from acp2.bridge.back_send import UpdateSender
from acp2.bridge.back_terminal import TerminalService
from acp2.compat.v1 import client_side, same_shape
from acp2.compat.v1.convert import Drops
from acp2.compat.v1.handshake import initialize_result_from_v1
from acp2.compat.v1.lift import V1Lifter
from acp2.compat.v1.quirks import quirks_for
from acp2.errors import (
    ConnectionClosed,
    InvalidParams,
    RequestCancelled,
    RequestError,
    ResourceNotFound,
)
from acp2.rpc import Connection
from acp2.rpc.handlers import Decoded, register
from acp2.rpc.link import Link
from acp2.schema.methods import MethodSpec
from acp2.transport.base import Transport

__all__ = ["BackBridge", "serve_back", "serve_back_transports"]

log = logging.getLogger("acp2.bridge")

#: Updates kept for a session id the agent has not answered ``session/new`` with yet,
#: and how many such ids at once (a bound against an agent that invents ids).
MAX_EARLY_UPDATES: Final = 256
MAX_EARLY_SESSIONS: Final = 8

_HOT_CHUNK: Final = hot.AgentMessageChunk
#: The v2 client's methods this bridge does not translate (``-32601``).
V2_UNHANDLED: Final[tuple[MethodSpec[Any, Any], ...]] = (
    v2m.AUTH_LOGIN,
    v2m.AUTH_LOGOUT,
    v2m.SESSION_DELETE,
    v2m.SESSION_FORK,
    v2m.SESSION_ARCHIVE,
    v2m.SESSION_UNARCHIVE,
    v2m.SESSION_SET_TITLE,
    v2m.AUTH_STATUS,
    v2m.PROVIDERS_LIST,
    v2m.PROVIDERS_SET,
    v2m.PROVIDERS_DISABLE,
)
#: The v1 agent's methods this bridge leaves unanswered (``-32601``, or ignored).
V1_UNHANDLED: Final[tuple[MethodSpec[Any, Any], ...]] = (
    v1m.ELICITATION_CREATE,
    v1m.ELICITATION_COMPLETE,
)


class _Session:
    """What the bridge keeps per session: its lifter and its directories."""

    def __init__(self, session_id: str, roots: list[str]) -> None:
        self.lifter = V1Lifter(session_id)
        self.roots = roots
        self.turn = anyio.Semaphore(1)  # held by the running v1 prompt
        self.withdrawn = anyio.Event()  # set (and renewed) by session/cancel and close


async def _cancel_when_set(event: anyio.Event, scope: anyio.CancelScope) -> None:
    await event.wait()
    scope.cancel()


def _roots(cwd: str, extra: Any) -> list[str]:
    return [cwd, *(extra if isinstance(extra, list) else [])]


class BackBridge:
    """Translates between a v1 ``agent`` connection and a v2 agent-role ``client``
    connection (see the module). ``files`` enables serving ``fs/*`` (writes asked
    through the client's permission requests), ``terminals`` serving ``terminal/*``
    (each command asked the same way). :meth:`install` registers the handlers (before or
    after the connections are entered); requests that outlive a handler (the v1 prompt)
    run in ``task_group``. :meth:`aclose` stops the terminals. ``dropped`` counts what
    did not translate."""

    def __init__(
        self,
        agent: Link,
        client: Link,
        result: v1.InitializeResponse,
        task_group: TaskGroup,
        *,
        files: bool = False,
        terminals: bool = False,
    ) -> None:
        self.agent = agent
        self.client = client
        self.result = result
        self.files = files
        self.terminals = terminals
        self.dropped: Drops = Drops()
        self._tg = task_group
        self._turns = _aio.Tasks(_turn_failed)
        self._sessions: dict[str, _Session] = {}
        self._early: dict[str, list[hot.SessionNotification]] = {}
        caps = result.agent_capabilities
        self._can_load = caps is not UNSET and caps.load_session is True
        missing_empty = quirks_for(result).missing_file_empty
        self._fs = FileService(self._session_roots, self._ask_write, missing_empty=missing_empty)
        #: How lifted updates reach the client (frames, or objects in this process).
        self._out = UpdateSender(agent, client, task_group)
        self._send = self._out.send
        self._terms = TerminalService(
            self._session_roots, self._allowed, self._out.send_soon, task_group
        )

    # -- registration --------------------------------------------------------------------

    def feed_updates_to(self, feed: Callable[[str, Any], Awaitable[None] | None]) -> None:
        """With acp2's client in this process: hand the lifted updates made for one
        update alone to ``feed(session_id, update)`` (its link's
        :meth:`~acp2.client.core.ClientCore.feed`) rather than through the local end
        (:meth:`acp2.bridge.back_send.UpdateSender.feed_to`); the rest still goes that
        way. Call it before the first session starts."""
        self._out.feed_to(feed)

    def install(self) -> None:
        """Register every handler on both connections, each from its method table
        (:func:`acp2.rpc.handlers.register`)."""
        register(self.client, v2m.METHODS, "agent", self._client_handlers(), unhandled=V2_UNHANDLED)
        agent: dict[MethodSpec[Any, Any], Callable[[Any], Any] | Decoded] = {
            # Chunks' text blocks are decoded as v2's (one decode per streamed chunk).
            v1m.SESSION_UPDATE: Decoded(hot.SessionNotification, self._on_update),
            v1m.SESSION_REQUEST_PERMISSION: self._on_permission,
        }
        if self.files:
            agent |= {v1m.FS_READ_TEXT_FILE: self._fs.read, v1m.FS_WRITE_TEXT_FILE: self._fs.write}
        if self.terminals:
            agent |= self._terminal_handlers()
        unhandled = [
            *V1_UNHANDLED,
            *(spec for spec in v1m.AGENT_REQUESTS.values() if spec not in agent),
        ]
        register(self.agent, v1m.METHODS, "client", agent, unhandled=unhandled)

    def _terminal_handlers(self) -> dict[MethodSpec[Any, Any], Callable[[Any], Any] | Decoded]:
        terms = self._terms
        return {
            v1m.TERMINAL_CREATE: terms.create,
            v1m.TERMINAL_OUTPUT: terms.output,
            v1m.TERMINAL_WAIT_FOR_EXIT: terms.wait_for_exit,
            v1m.TERMINAL_KILL: terms.kill,
            v1m.TERMINAL_RELEASE: terms.release,
        }

    async def aclose(self) -> None:
        """Stop the running v1 prompts' tasks and every terminal's process group (the
        connection ended); bounded, shielded."""
        self._turns.cancel()
        await self._turns.wait()
        await self._terms.aclose()

    def _client_handlers(self) -> dict[MethodSpec[Any, Any], Callable[[Any], Any] | Decoded]:
        """The v2 client's methods this bridge serves; with terminals, a cancelled or
        closed session's commands stop with it."""
        return {
            v2m.INITIALIZE: self._initialize,
            v2m.SESSION_NEW: self._new,
            v2m.SESSION_RESUME: self._resume,
            v2m.SESSION_LIST: self._same(v1m.SESSION_LIST),
            v2m.SESSION_CLOSE: self._close_and_release if self.terminals else self._close,
            v2m.SESSION_PROMPT: self._prompt,
            v2m.SESSION_CANCEL: self._cancel_and_kill if self.terminals else self._cancel,
            v2m.SESSION_SET_CONFIG_OPTION: self._set_config_option,
            v2m.TOOL_CALL_CANCEL: _no_background,
            v2m.TERMINAL_CANCEL: _no_background,
        }

    # -- v2 requests from the client -------------------------------------------------------

    async def _initialize(self, _params: v2.InitializeRequest) -> v2.InitializeResponse:
        return self.initialize_response()

    def initialize_response(self) -> v2.InitializeResponse:
        """The v2 ``initialize`` answer for the v1 agent's (protocol version 2)."""
        response = initialize_result_from_v1(self.result)
        response.protocol_version = 2  # the v2 side speaks v2, whatever the agent said
        return response

    async def _new(self, params: v2.NewSessionRequest) -> v2.NewSessionResponse:
        request = client_side.new_session_request_to_v1(params, self.dropped)
        result = await self.agent.call(v1m.SESSION_NEW, request)
        session = _Session(result.session_id, _roots(params.cwd, params.additional_directories))
        self._sessions[result.session_id] = session
        response = session.lifter.new_session_result(result)
        # Sent before the answer: the v2 client keeps updates of a session it does not
        # know yet until that session is registered (the order stays the agent's).
        for note in self._early.pop(result.session_id, ()):
            pending = self._send(result.session_id, session.lifter.lift(note))
            if pending is not None:
                await pending
        return response

    async def _resume(self, params: v2.ResumeSessionRequest) -> v2.ResumeSessionResponse:
        try:
            request = client_side.resume_request_to_v1(params, self.dropped)
        except client_side.InvalidParams as exc:
            raise InvalidParams(str(exc)) from None
        loading = isinstance(request, v1.LoadSessionRequest)
        if loading and not self._can_load:
            raise InvalidParams("the v1 agent cannot replay a session (no loadSession)")
        # The lifter must exist before the call: a replay arrives before the answer.
        roots = _roots(params.cwd, params.additional_directories)
        session = self._sessions[params.session_id] = _Session(params.session_id, roots)
        if isinstance(request, v1.LoadSessionRequest):
            loaded = await self.agent.call(v1m.SESSION_LOAD, request)
            return session.lifter.resume_result(loaded)
        resumed = await self.agent.call(v1m.SESSION_RESUME, request)
        return session.lifter.resume_result(resumed)

    def _same(self, spec: v1m.MethodSpec[Any, Any]) -> Callable[[Any], Awaitable[Any]]:
        async def forward(params: Any) -> Any:
            result = await self.agent.call(spec, same_shape.params_to_v1(spec, params))
            return same_shape.result_from_v1(spec, result)

        return forward

    async def _close(self, params: v2.CloseSessionRequest) -> v2.CloseSessionResponse:
        self._withdraw_held(params.session_id)
        result: v2.CloseSessionResponse = await self._same(v1m.SESSION_CLOSE)(params)
        self._sessions.pop(params.session_id, None)
        self._out.forget(params.session_id)
        return result

    async def _set_config_option(
        self, params: v2.SetSessionConfigOptionRequest
    ) -> v2.SetSessionConfigOptionResponse:
        lifter = self._session(params.session_id).lifter
        request = lifter.set_config_option(params)
        if isinstance(request, v1.SetSessionModeRequest):
            await self.agent.call(v1m.SESSION_SET_MODE, request)
            lifter.lift(v1.CurrentModeUpdate(current_mode_id=request.mode_id))
            return v2.SetSessionConfigOptionResponse(config_options=lifter.config_options())
        result = await self.agent.call(v1m.SESSION_SET_CONFIG_OPTION, request)
        lifter.lift(v1.ConfigOptionUpdate(config_options=result.config_options))
        return v2.SetSessionConfigOptionResponse(config_options=lifter.config_options())

    async def _prompt(self, params: v2.PromptRequest) -> v2.PromptResponse:
        session = self._session(params.session_id)
        await self._hold(session)
        try:
            request, message_id, updates = session.lifter.prompt(params)
        except BaseException:
            session.turn.release()
            raise
        # Accepted now; the turn runs in a task: a plain one (anyio's start_soon costs
        # ~15-20 µs of every prompt), stopped by aclose. Its first step writes the v1
        # request, before anything else is done for the turn; `user_message` and
        # `running` follow the answer (v2 order) from a callback that runs right after
        # that step, before any reply can be read (delivered first, they held the request
        # back by ~40 µs).
        self._turns.spawn(self._turn(session, request))
        _aio.call_soon(partial(self._out.send_soon, params.session_id, updates))
        return v2.PromptResponse(message_id=message_id)

    async def _hold(self, session: _Session) -> None:
        """Take the session's turn, waiting while a v1 prompt runs; ``RequestCancelled``
        at once when a ``session/cancel`` / ``close`` withdraws this waiting prompt."""
        try:
            session.turn.acquire_nowait()
            return
        except anyio.WouldBlock:
            withdrawn = session.withdrawn
        acquired = False
        async with anyio.create_task_group() as tg:
            tg.start_soon(_cancel_when_set, withdrawn, tg.cancel_scope)
            await session.turn.acquire()  # cancelled (never taken) if withdrawn first
            acquired = True
            tg.cancel_scope.cancel()
        if withdrawn.is_set():
            if acquired:
                session.turn.release()
            raise RequestCancelled("the prompt was withdrawn by session/cancel")

    async def _turn(self, session: _Session, request: v1.PromptRequest) -> None:
        try:
            await self._run_turn(session, request)
        finally:
            session.turn.release()

    async def _run_turn(self, session: _Session, request: v1.PromptRequest) -> None:
        lifter = session.lifter
        try:
            result = await self.agent.call(v1m.SESSION_PROMPT, request)
        except RequestError as exc:
            error = v2.Error(code=exc.code, message=exc.message)
            if exc.data is not None:
                error.data = exc.data
            pending = self._send(lifter.session_id, lifter.prompt_failed(error))
        except ConnectionClosed:
            return  # the agent is gone: the bridge closes the client side
        else:
            pending = self._send(lifter.session_id, lifter.prompt_done(result))
        if pending is not None:
            await pending

    def _withdraw_held(self, session_id: str) -> None:
        session = self._sessions.get(session_id)
        if session is not None:
            session.withdrawn.set()
            session.withdrawn = anyio.Event()

    def _cancel(self, params: v2.CancelSessionNotification) -> None:
        self._withdraw_held(params.session_id)
        if self.agent.closed:
            return
        note = same_shape.params_to_v1(v1m.SESSION_CANCEL, params)
        self.agent.send_notification_nowait(v1m.SESSION_CANCEL, note)

    def _cancel_and_kill(self, params: v2.CancelSessionNotification) -> None:
        self._cancel(params)
        self._tg.start_soon(self._terms.kill_session, params.session_id)

    async def _close_and_release(self, params: v2.CloseSessionRequest) -> v2.CloseSessionResponse:
        try:
            return await self._close(params)
        finally:
            await self._terms.release_session(params.session_id)

    # -- v1 messages from the agent --------------------------------------------------------

    def _on_update(self, note: hot.SessionNotification) -> Awaitable[None] | None:
        # A plain function, called in the v1 connection's reader: an awaitable return (the
        # client ordering an idle behind a prompt's answer) is awaited before the next.
        session = self._sessions.get(note.session_id)
        if session is None:
            self._keep_early(note)
            return None
        update = note.update
        if type(update) is _HOT_CHUNK:  # a stream's hot path: two calls to the session
            return self._out.pass_on(note.session_id, session.lifter.agent_chunk(update))
        return self._send(note.session_id, session.lifter.lift(update))

    def _keep_early(self, note: hot.SessionNotification) -> None:
        # Real agents (Gemini CLI) send a session's first update right with the
        # session/new answer, which reaches this handler before `_new` resumes.
        early = self._early.get(note.session_id)
        if early is None and len(self._early) < MAX_EARLY_SESSIONS:
            early = self._early[note.session_id] = []
        if early is None or len(early) >= MAX_EARLY_UPDATES:
            log.warning("dropped a v1 update for unknown session %s", note.session_id)
            return
        early.append(note)

    async def _on_permission(
        self, params: v1.RequestPermissionRequest
    ) -> v1.RequestPermissionResponse:
        request = client_side.permission_request_from_v1(params)
        try:
            answer = await self.client.call(v2m.SESSION_REQUEST_PERMISSION, request)
        except (RequestError, ConnectionClosed) as exc:
            log.info("permission request not answered (%s): cancelled", exc)
            return v1.RequestPermissionResponse(outcome=v1.CancelledPermissionOutcome())
        return client_side.permission_result_to_v1(answer)

    async def _ask_write(self, session_id: str, path: str) -> bool:
        return await self._allowed(
            v2.RequestPermissionRequest(
                session_id=session_id,
                title=f"Write {path}",
                description="The agent asks to write this file.",
                options=[
                    v2.PermissionOption(option_id="allow", name="Allow", kind="allow_once"),
                    v2.PermissionOption(option_id="reject", name="Reject", kind="reject_once"),
                ],
            )
        )

    async def _allowed(self, request: v2.RequestPermissionRequest) -> bool:
        """Ask the v2 client ``request`` (options ``allow`` / ``reject``); True: allowed."""
        try:
            answer = await self.client.call(v2m.SESSION_REQUEST_PERMISSION, request)
        except (RequestError, ConnectionClosed):
            return False
        outcome = answer.outcome
        return isinstance(outcome, v2.SelectedPermissionOutcome) and outcome.option_id == "allow"

    # -- helpers ---------------------------------------------------------------------------

    def _session(self, session_id: str) -> _Session:
        found = self._sessions.get(session_id)
        if found is None:
            raise ResourceNotFound(f"unknown session {session_id}", {"sessionId": session_id})
        return found

    def _session_roots(self, session_id: str) -> list[str] | None:
        found = self._sessions.get(session_id)
        return found.roots if found is not None else None


def _turn_failed(exc: BaseException) -> None:
    # _run_turn absorbs the errors a v1 prompt can end with: this is a bug of ours.
    log.error("a bridged v1 prompt's task failed", exc_info=exc)


async def _until_either_closes(a: Connection, b: Connection) -> None:
    async with anyio.create_task_group() as tg:

        async def wait(conn: Connection) -> None:
            await conn.wait_closed()
            tg.cancel_scope.cancel()

        tg.start_soon(wait, a)
        tg.start_soon(wait, b)


async def serve_back(
    agent: Connection,
    client_side_transport: Transport,
    result: v1.InitializeResponse,
    *,
    files: bool = False,
    terminals: bool = False,
) -> None:
    """Serve the v2 side on ``client_side_transport`` for the entered v1 ``agent``
    connection whose ``initialize`` answered ``result``; returns once either side
    closed, with the v2 side closed and every terminal stopped (the ``agent`` connection
    stays its owner's). ``files`` / ``terminals``: as :class:`BackBridge` takes them."""
    client = Connection(client_side_transport, name="v2 client (bridge)")
    async with anyio.create_task_group() as tg:
        bridge = BackBridge(agent, client, result, tg, files=files, terminals=terminals)
        bridge.install()
        try:
            async with client:
                await _until_either_closes(agent, client)
        finally:
            await bridge.aclose()
        tg.cancel_scope.cancel()


async def serve_back_transports(
    client_side_transport: Transport,
    agent_transport: Transport,
    result: v1.InitializeResponse,
    *,
    files: bool = False,
    terminals: bool = False,
) -> None:
    """:func:`serve_back` with a v1 connection made on ``agent_transport`` (whose
    ``initialize`` was already answered ``result``); both sides closed on return."""
    agent = Connection(agent_transport, name="v1 agent (bridge)")
    async with agent:
        await serve_back(agent, client_side_transport, result, files=files, terminals=terminals)


async def _no_background(_params: Any) -> Any:
    """``tool_call/cancel`` / ``terminal/cancel``: a v1 agent has no background work and
    never advertises ``cancel``, so every item is "not cancellable" (-32602, TC-13)."""
    raise InvalidParams("The agent speaks ACP v1: nothing it runs can be cancelled alone")

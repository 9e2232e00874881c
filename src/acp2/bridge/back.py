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
  ``list`` / ``close`` / ``set_config_option`` are translated both ways; what the agent
  did not advertise of ``list`` / ``resume`` / ``close`` is emulated or refused here
  (:mod:`acp2.bridge.back_sessions`), and its error answers keep their reason;
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

import acp2.compat.v1.lift_params as hot
import acp2.compat.v1.methods as v1m
import acp2.compat.v1.schema as v1
import acp2.schema as v2
import acp2.schema.methods as v2m
from acp2 import _aio
from acp2.bridge import back_sessions as sessions
from acp2.bridge.back_fs import FileService
from acp2.bridge.back_send import UpdateSender
from acp2.bridge.back_terminal import TerminalService
from acp2.bridge.extensions import forward_extensions
from acp2.compat.v1 import client_side, same_shape
from acp2.compat.v1.convert import Drops
from acp2.compat.v1.handshake import initialize_result_from_v1, v1_sessions
from acp2.compat.v1.lift import V1Lifter
from acp2.compat.v1.quirks import quirks_for
from acp2.errors import (
    ConnectionClosed,
    InvalidParams,
    MethodNotFound,
    RequestCancelled,
    RequestError,
    ResourceNotFound,
)
from acp2.lifecycle.prompt_content import PromptTakes, refusal
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
#: The v2 client's methods this bridge does not translate (``-32601``); it never
#: advertises ``session.mcp.acp``, so a client sends it no ``mcp/message``.
V2_UNHANDLED: Final[tuple[MethodSpec[Any, Any], ...]] = (
    v2m.AUTH_LOGIN,
    v2m.AUTH_LOGOUT,
    v2m.SESSION_DELETE,
    v2m.SESSION_FORK,
    v2m.SESSION_ARCHIVE,
    v2m.SESSION_UNARCHIVE,
    v2m.SESSION_SET_TITLE,
    v2m.AUTH_STATUS,
    v2m.MCP_MESSAGE,
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
        #: A resume's stand-in session/load that may still be replaying (until a prompt).
        self.replay: sessions.Replay | None = None
        self.withdrawn = anyio.Event()  # set (and renewed) by session/cancel and close
        #: The permission questions now before the client, each stopped by session/cancel
        #: (its $/cancel_request goes out, PL-16).
        self.asking: set[anyio.CancelScope] = set()


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
        #: Which of list / resume / close the agent keeps (the rest: back_sessions).
        self.sessions = v1_sessions(result)
        self._forgotten = sessions.Forgotten(self.dropped)
        #: The prompt blocks the agent takes (its v1 promptCapabilities), PL-02.
        session_caps = initialize_result_from_v1(result).capabilities.session
        self._takes = PromptTakes.of(getattr(session_caps, "prompt", None))
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
        forward_extensions(self.agent, self.client, "v1 agent bridge (agent -> client)")
        forward_extensions(self.client, self.agent, "v1 agent bridge (client -> agent)")

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
            v2m.SESSION_LIST: self._list,
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
        result = await self._call(v1m.SESSION_NEW, request)
        self._forgotten.discard(result.session_id)
        session = _Session(result.session_id, _roots(params.cwd, params.additional_directories))
        self._sessions[result.session_id] = session
        response = session.lifter.new_session_result(result)
        # Sent before the answer: the v2 client keeps updates of a session it does not
        # know yet until that session is registered (the order stays the agent's).
        for note in self._early.pop(result.session_id, ()):
            await self._out.send_now(result.session_id, session.lifter.lift(note))
        return response

    async def _call(self, spec: MethodSpec[Any, Any], params: Any) -> Any:
        """The agent's answer to ``spec``, its errors with their reason
        (:func:`acp2.bridge.back_sessions.agent_call`)."""
        return await sessions.agent_call(self.agent, self.sessions.agent, spec, params)

    async def _resume(self, params: v2.ResumeSessionRequest) -> v2.ResumeSessionResponse:
        request = sessions.resume_request(params, self.sessions, self.dropped)
        # The lifter must exist before the call: a replay arrives before the answer.
        roots = _roots(params.cwd, params.additional_directories)
        if isinstance(request, v1.ResumeSessionRequest) and not self.sessions.can_resume:
            return await self._load_withheld(params.session_id, roots, request)
        self._forgotten.discard(params.session_id)
        session = self._sessions[params.session_id] = _Session(params.session_id, roots)
        if isinstance(request, v1.LoadSessionRequest):
            session.replay = replay = sessions.Replay(self.dropped, withhold=False)
            loaded = await self._call(v1m.SESSION_LOAD, request)
            await replay.ended()  # all of the replay before the answer (SS-14)
            session.replay = None
            result = session.lifter.resume_result(loaded)
        else:
            result = session.lifter.resume_result(await self._call(v1m.SESSION_RESUME, request))
        return await self._answered_resume(session, result)

    async def _answered_resume(
        self, session: _Session, result: v2.ResumeSessionResponse
    ) -> v2.ResumeSessionResponse:
        """``result``, once the foreground state went out after any replay (SS-16)."""
        await self._out.send_now(session.lifter.session_id, [session.lifter.snapshot()])
        return result

    async def _load_withheld(
        self, session_id: str, roots: list[str], request: v1.ResumeSessionRequest
    ) -> v2.ResumeSessionResponse:
        """A resume without replay through v1 ``session/load``, its replay withheld until
        the client's next prompt (:class:`acp2.bridge.back_sessions.Replay`)."""
        self._forgotten.discard(session_id)
        session = self._sessions[session_id] = _Session(session_id, roots)
        session.replay = replay = sessions.Replay(self.dropped)
        loaded = await self._call(v1m.SESSION_LOAD, sessions.load_for_resume(request))
        await replay.ended()
        return await self._answered_resume(session, session.lifter.resume_result(loaded))

    async def _list(self, params: v2.ListSessionsRequest) -> v2.ListSessionsResponse:
        if not self.sessions.can_list:
            raise MethodNotFound(self.sessions.refusal(v2m.SESSION_LIST.name))
        request = same_shape.params_to_v1(v1m.SESSION_LIST, params)
        result = await self._call(v1m.SESSION_LIST, request)
        listed: v2.ListSessionsResponse = same_shape.result_from_v1(v1m.SESSION_LIST, result)
        return listed

    async def _close(self, params: v2.CloseSessionRequest) -> v2.CloseSessionResponse:
        self._withdraw_held(params.session_id)
        if self.sessions.can_close:
            request = same_shape.params_to_v1(v1m.SESSION_CLOSE, params)
            result = await self._call(v1m.SESSION_CLOSE, request)
            closed: v2.CloseSessionResponse = same_shape.result_from_v1(v1m.SESSION_CLOSE, result)
        else:
            await self._end_turn(params.session_id)
            self._forgotten.add(params.session_id)
            closed = sessions.closed_locally()
        self._sessions.pop(params.session_id, None)
        self._out.forget(params.session_id)
        return closed

    async def _end_turn(self, session_id: str) -> None:
        """Cancel ``session_id``'s running v1 prompt (v1 ``session/cancel``) and wait for
        its ``idle``, as a close does before it answers (SS-22)."""
        session = self._sessions.get(session_id)
        if session is None or session.turn.value:  # no v1 prompt runs
            return
        if not self.agent.closed:
            note = v1.CancelNotification(session_id=session_id)
            self.agent.send_notification_nowait(v1m.SESSION_CANCEL, note)
        await session.turn.acquire()
        session.turn.release()

    async def _set_config_option(
        self, params: v2.SetSessionConfigOptionRequest
    ) -> v2.SetSessionConfigOptionResponse:
        lifter = self._session(params.session_id).lifter
        request = lifter.set_config_option(params)
        if isinstance(request, v1.SetSessionModeRequest):
            await self._call(v1m.SESSION_SET_MODE, request)
            lifter.lift(v1.CurrentModeUpdate(current_mode_id=request.mode_id))
            return v2.SetSessionConfigOptionResponse(config_options=lifter.config_options())
        result = await self._call(v1m.SESSION_SET_CONFIG_OPTION, request)
        lifter.lift(v1.ConfigOptionUpdate(config_options=result.config_options))
        return v2.SetSessionConfigOptionResponse(config_options=lifter.config_options())

    async def _prompt(self, params: v2.PromptRequest) -> v2.PromptResponse:
        session = self._session(params.session_id)
        why = refusal(self._takes, params.prompt)
        if why is not None:  # refused here: a v1 agent may take what it never advertised
            raise InvalidParams(why)
        session.replay = None  # what the agent sends from now on is this turn's
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
            sessions.explain(exc)  # the reason in the message the user sees
            error = v2.Error(code=exc.code, message=exc.message)
            if exc.data is not None:
                error.data = exc.data
            updates = lifter.prompt_failed(error)
        except ConnectionClosed:
            return  # the agent is gone: the bridge closes the client side
        else:
            updates = lifter.prompt_done(result)
        await self._out.send_now(lifter.session_id, updates)

    def _withdraw_held(self, session_id: str) -> None:
        session = self._sessions.get(session_id)
        if session is not None:
            session.withdrawn.set()
            session.withdrawn = anyio.Event()

    def _cancel(self, params: v2.CancelSessionNotification) -> None:
        self._withdraw_held(params.session_id)
        session = self._sessions.get(params.session_id)
        for question in session.asking if session is not None else ():
            question.cancel()
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
            if not self._forgotten.swallow(note.session_id):  # closed here: not kept
                self._keep_early(note)
            return None
        update = note.update
        if session.replay is not None and session.replay.withheld(update):
            return None
        if type(update) is _HOT_CHUNK:  # a stream's hot path: two calls to the session
            return self._out.pass_on(note.session_id, session.lifter.agent_chunk(update))
        lifted = session.lifter.lift(update)
        if session.lifter.children:
            self._open_children(session)
        return self._send(note.session_id, lifted)

    def _open_children(self, parent: _Session) -> None:
        """Open a session for each child ``parent`` announced (Preview subagents, v1
        opt-in): its updates, under its own id, are lifted like any session's."""
        for child_id in parent.lifter.children:
            if child_id not in self._sessions:
                self._sessions[child_id] = _Session(child_id, parent.roots)
        parent.lifter.children.clear()

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
        session = self._sessions.get(params.session_id)
        if session is None:
            return await self._ask(request)
        await self._out.send_now(params.session_id, session.lifter.permission_asked())
        with anyio.CancelScope() as question:
            session.asking.add(question)
            try:
                answer = await self._ask(request)
            finally:
                session.asking.discard(question)
        if question.cancelled_caught:  # session/cancel: $/cancel_request went out
            answer = v1.RequestPermissionResponse(outcome=v1.CancelledPermissionOutcome())
        cancelled = not isinstance(answer.outcome, v1.SelectedPermissionOutcome)
        updates = session.lifter.permission_answered(cancelled=cancelled)
        await self._out.send_now(params.session_id, updates)
        return answer

    async def _ask(self, request: v2.RequestPermissionRequest) -> v1.RequestPermissionResponse:
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

"""The front bridge: a v2 agent served to a v1 client, through :mod:`acp2.compat.v1`.

:class:`FrontBridge` joins two links: ``v1``, a JSON-RPC connection to the editor (v1
methods, :mod:`acp2.compat.v1.methods`), and ``v2``, which faces the agent as its client
(v2 methods, :mod:`acp2.schema.methods`). Every v1 request is lifted to v2 with the
pure functions of :mod:`acp2.compat.v1` and its answer projected back; every v2 update
goes through the session's :class:`~acp2.compat.v1.project.V1Projector`. A v1
``session/prompt`` is held open until the v2 ``idle`` that ends its turn
(:mod:`acp2.bridge.turns`). ``v2`` is either a connection to a spawned agent
(:func:`run_front`, ``acp2 bridge``) or, for an agent in this process
(:func:`serve_v1_client`, ``Agent.serve``), one end of :func:`acp2.bridge.inprocess.inprocess_pair`
whose other end the agent runtime serves: requests are its handlers awaited, its
updates reach :meth:`FrontBridge.take` as the objects it emits, in the call that emits
them (the frames it sends as bytes reach :meth:`FrontBridge.deliver` decoded).
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any, Final

import anyio
import anyio.lowlevel
import msgspec
from anyio.abc import TaskGroup
from msgspec import UNSET, Raw

import acp2.compat.v1.methods as v1m
import acp2.compat.v1.schema as v1
import acp2.schema as v2
import acp2.schema.methods as v2m
from acp2.bridge.extensions import forward_extensions
from acp2.bridge.inprocess import inprocess_pair
from acp2.bridge.turns import BridgeSession
from acp2.compat.v1 import agent_side as side
from acp2.compat.v1 import handshake, same_shape
from acp2.compat.v1.convert import Drops
from acp2.compat.v1.project_children import CHILD_KINDS, ChildFolder, wants_subagents
from acp2.errors import ConnectionClosed, InvalidParams, RequestCancelled, RequestError
from acp2.rpc.connection import Connection
from acp2.rpc.handlers import register
from acp2.rpc.later import Later
from acp2.rpc.link import Link
from acp2.rpc.responder import handler_failed
from acp2.schema.codec import encode
from acp2.schema.methods import MethodSpec
from acp2.transport.base import Transport

__all__ = ["FrontBridge", "run_front", "serve_v1_client"]

logger = logging.getLogger("acp2.bridge")

#: The agent runtime serving one v2 connection to its end (see :func:`serve_v1_client`).
ServeV2 = Callable[[Link], Awaitable[None]]

#: How long the agent may take to answer ``initialize`` once the client has closed its end.
INITIALIZE_GRACE: Final = 5.0
#: Updates kept per session id the client has not seen opened yet, and how many such ids.
MAX_UNOPENED_UPDATES: Final = 256
MAX_UNOPENED_SESSIONS: Final = 8
#: The tool call updates that may name a child (``session`` content), for folding.
_CALL_KINDS: Final = frozenset({v2.ToolCallUpdate, v2.ToolCallContentChunk})
#: The agent's v2 methods a v1 client has no counterpart for (``-32601``, or ignored).
#: MCP over ACP is among them: the bridge drops ``acp`` servers on the way (v1 has no
#: such transport), so a v2 agent has nothing to connect to through it.
V2_UNHANDLED: Final[tuple[MethodSpec[Any, Any], ...]] = (
    v2m.ELICITATION_CREATE,
    v2m.ELICITATION_COMPLETE,
    v2m.AUTH_STATUS_UPDATE,
    v2m.MCP_CONNECT,
    v2m.MCP_MESSAGE,
    v2m.MCP_DISCONNECT,
)


class FrontBridge:
    """Translates between a v1 client (``v1``) and a v2 agent (``v2``); see the module.

    :meth:`register` installs the handlers on both connections. :meth:`dropped` is what
    could not be said in v1 so far, by the counter names of ``docs/v1-projection.md``.
    """

    def __init__(self, v1conn: Connection, v2conn: Link, task_group: TaskGroup) -> None:
        self.v1 = v1conn
        self.v2 = v2conn
        self.task_group = task_group
        self.sessions: dict[str, BridgeSession] = {}
        #: Updates of sessions whose ``session/new`` answer the bridge has not yet seen.
        self._unopened: dict[str, list[v2.UpdateSessionNotification]] = {}
        self._drops: Drops = Counter()
        self._client: v1.InitializeRequest | None = None
        #: Child sessions for a client without ``clientCapabilities.subagents``: their
        #: text folded into the parent's tool call (None: the client opted in).
        self._folder: ChildFolder | None = ChildFolder(self._drops)

    def register(self, *, update: Callable[[Any], Awaitable[None] | None] | None = None) -> None:
        """Serve the v1 methods on ``v1`` and the agent's requests on ``v2``, each from its
        method table (:func:`acp2.rpc.handlers.register`). ``update`` replaces
        :meth:`on_update` as the ``session/update`` handler (the in-process agent's
        emitter sees the v1 connection's backpressure itself)."""
        v1_handlers: dict[MethodSpec[Any, Any], Callable[[Any], Any]] = {
            spec: self._same_shape(spec) for spec in same_shape.SAME_SHAPE if spec.kind == "request"
        }
        v1_handlers |= {
            v1m.INITIALIZE: self.on_initialize,
            v1m.SESSION_NEW: self.on_new,
            v1m.SESSION_LOAD: self.on_load,
            v1m.SESSION_RESUME: self.on_resume,
            v1m.SESSION_SET_MODE: self.on_set_mode,
            v1m.SESSION_SET_CONFIG_OPTION: self.on_set_config_option,
            v1m.SESSION_PROMPT: self.on_prompt,
            v1m.SESSION_CANCEL: self.on_cancel,
        }
        register(self.v1, v1m.METHODS, "agent", v1_handlers)
        v2_handlers: dict[MethodSpec[Any, Any], Callable[[Any], Any]] = {
            v2m.SESSION_UPDATE: self.on_update if update is None else update,
            v2m.SESSION_REQUEST_PERMISSION: self.on_permission,
        }
        register(self.v2, v2m.METHODS, "client", v2_handlers, unhandled=V2_UNHANDLED)
        forward_extensions(self.v2, self.v1, "v1 bridge (agent -> client)")
        forward_extensions(self.v1, self.v2, "v1 bridge (client -> agent)")

    def dropped(self) -> Drops:
        """Everything not sent to the v1 client, summed over the connection."""
        total: Drops = Counter(self._drops)
        for session in self.sessions.values():
            total.update(session.projector.dropped)
        return total

    @property
    def _booleans(self) -> bool:
        return self._client is not None and handshake.wants_boolean_options(self._client)

    def session(self, session_id: str, *, fresh: bool = False) -> BridgeSession:
        """The bridge state of ``session_id`` (made on first sight, or anew if ``fresh``)."""
        found = self.sessions.get(session_id)
        if found is None or fresh:
            found = BridgeSession(session_id, boolean_options=self._booleans)
            self.sessions[session_id] = found
        return found

    # -- v1 requests ----------------------------------------------------------------------

    async def on_initialize(self, params: v1.InitializeRequest) -> v1.InitializeResponse:
        """Lift ``initialize`` to v2 and answer with the agent's result as v1."""
        self._client = params
        caps = params.client_capabilities
        if wants_subagents(None if caps is UNSET else caps):
            self._folder = None  # child updates pass, each under its own id
        request = handshake.initialize_request_from_v1(params, self._drops)
        # A client that writes initialize and then closes its end (a script, a probe)
        # still gets the answer, as from the v2 runtime, which answers it without
        # awaiting: the connection closing must not cancel this call half-way.
        with anyio.CancelScope(shield=True), anyio.fail_after(INITIALIZE_GRACE):
            result = await self.v2.call(v2m.INITIALIZE, request)
        terminal_auth = handshake.runs_terminal_login(params.client_capabilities)
        return handshake.initialize_result_to_v1(
            result, terminal_auth=terminal_auth, dropped=self._drops
        )

    def _same_shape(self, spec: v1m.MethodSpec[Any, Any]) -> Any:
        async def forward(params: Any) -> Any:
            """Re-read ``params`` as v2, call the agent, re-read its result as v1."""
            v2spec = same_shape.SAME_SHAPE[spec]
            result = await self.v2.call(v2spec, same_shape.params_from_v1(spec, params))
            return same_shape.result_to_v1(spec, result)

        return forward

    async def on_new(self, params: v1.NewSessionRequest) -> v1.NewSessionResponse:
        """``session/new``: the agent's session, its mode option offered as v1 ``modes``."""
        request = side.new_session_request_from_v1(params, self._drops)
        result = await self.v2.call(v2m.SESSION_NEW, request)
        session = self.session(result.session_id)
        session.offer_mode(result.config_options)
        session.backlog = self._unopened.pop(result.session_id, [])
        # Started now, the flush runs after this answer is queued (the responder queues
        # it as soon as the handler returns), so the client knows the session first.
        self.task_group.start_soon(self._flush, session)
        return side.new_session_result_to_v1(result, booleans=self._booleans, dropped=self._drops)

    async def on_load(self, params: v1.LoadSessionRequest) -> v1.LoadSessionResponse:
        """``session/load``: a v2 resume replaying from the start. The replayed updates
        are projected and sent as they arrive, so all of them precede this answer."""
        session = self.session(params.session_id, fresh=True)
        request = side.load_request_from_v1(params, self._drops)
        return await self._resume(session, request)

    async def on_resume(self, params: v1.ResumeSessionRequest) -> v1.ResumeSessionResponse:
        """``session/resume``: a v2 resume without replay."""
        session = self.session(params.session_id)
        result = await self._resume(session, side.resume_request_from_v1(params, self._drops))
        return v1.ResumeSessionResponse(
            modes=result.modes, config_options=result.config_options, meta=result.meta
        )

    async def _resume(
        self, session: BridgeSession, request: v2.ResumeSessionRequest
    ) -> v1.LoadSessionResponse:
        result = await self.v2.call(v2m.SESSION_RESUME, request)
        session.turns.forget()
        session.offer_mode(result.config_options)
        return side.resume_result_to_v1(result, booleans=self._booleans, dropped=self._drops)

    async def on_set_mode(self, params: v1.SetSessionModeRequest) -> v1.SetSessionModeResponse:
        """``session/set_mode``: set the v2 config option offered as the modes."""
        session = self.sessions.get(params.session_id)
        config_id = session.projector.mode_config_id if session is not None else None
        if session is None or config_id is None:
            raise InvalidParams("This session offers no modes")
        await self.v2.call(v2m.SESSION_SET_CONFIG_OPTION, side.set_mode_from_v1(params, config_id))
        session.projector.note_mode(params.mode_id)
        return v1.SetSessionModeResponse()

    async def on_set_config_option(
        self, params: v1.SetSessionConfigOptionRequest
    ) -> v1.SetSessionConfigOptionResponse:
        """``session/set_config_option``, typed for v2."""
        request = side.set_config_option_from_v1(params)
        result = await self.v2.call(v2m.SESSION_SET_CONFIG_OPTION, request)
        return side.set_config_option_result_to_v1(
            result, booleans=self._booleans, dropped=self._drops
        )

    async def on_prompt(
        self, params: v1.PromptRequest
    ) -> v1.PromptResponse | Later[v1.PromptResponse]:
        """``session/prompt``, held open until the idle that ends its turn and answered in
        the call that delivers that idle (a :class:`Later`: no task wakes for it); a
        prompt the agent withdrew (cancelled while queued) is answered ``cancelled``."""
        session = self.session(params.session_id)
        session.projector.prompt_sent()
        try:
            accepted = await self.v2.call(v2m.SESSION_PROMPT, side.prompt_request_from_v1(params))
        except RequestCancelled:
            return v1.PromptResponse(stop_reason="cancelled")
        message_id = accepted.message_id
        if message_id is UNSET:
            raise RequestError("The agent did not name the prompt's message")
        later: Later[v1.PromptResponse] = Later(
            on_cancel=partial(session.turns.give_up, message_id)
        )
        session.turns.answer(message_id, partial(self._answer_prompt, later))
        return later

    def _answer_prompt(self, later: Later[v1.PromptResponse], idle: v2.StateUpdate) -> None:
        """Answer a held prompt with the stop reason of its ``idle`` (or its error)."""
        try:
            later.resolve(side.prompt_result_to_v1(idle, self._drops))
        except side.PromptFailed as failed:
            error = failed.error
            data = None if error.data is UNSET else error.data
            later.fail(RequestError(error.message, data, code=error.code))
        except Exception as exc:  # as a failing handler is answered: never left open
            later.fail(handler_failed(exc, "v1 bridge", "a prompt's answer from its idle"))

    async def on_cancel(self, params: v1.CancelNotification) -> None:
        """``session/cancel``: the agent ends the turn ``cancelled``, which answers it."""
        # A prompt read just before this cancel has its handler task started but not run:
        # one checkpoint lets it send its v2 prompt first (it sends before any await).
        await anyio.lowlevel.checkpoint()
        await self.v2.notify(v2m.SESSION_CANCEL, side.cancel_from_v1(params))

    # -- the agent's messages ---------------------------------------------------------------

    def on_update(self, params: v2.UpdateSessionNotification) -> Awaitable[None] | None:
        """:meth:`deliver`, called in the v2 connection's reader: only backpressure (the
        v1 client reading slower than the agent writes) returns something to await."""
        self.deliver(params)
        return self.v1.drain() if self.v1.congested else None

    def deliver(self, params: v2.UpdateSessionNotification) -> None:
        """Project one v2 update and send what v1 can say of it (maybe nothing); held
        back while its session's ``session/new`` answer is not out yet."""
        session = self.sessions.get(params.session_id)
        if session is None:
            if self._folder is not None and params.session_id in self._folder:
                self._fold(params)
            else:
                self._hold(params)
        elif session.backlog is not None:
            session.backlog.append(params)
        else:
            self._send(session, params)

    def take(self, session_id: str, update: Any, frame: bytes) -> None:
        """The agent's emitter in this process (its sink's ``send_update_nowait``): one
        update of ``session_id`` as the object emitted, ``frame`` its v2 encoding. A plain
        text chunk of an open session says the same in v1: ``frame`` is queued as it is
        (the stream's hot path: a few attribute tests). Any other update of an open
        session is projected from the object; one of a session not open yet is held
        (:meth:`deliver`). Nothing is decoded; ``ConnectionClosed`` once ``v1`` closes."""
        session = self.sessions.get(session_id)
        if session is None or session.backlog is not None:
            self.deliver(v2.UpdateSessionNotification(session_id=session_id, update=update))
        elif session.projector.plain_chunk(update):
            self.v1.send_frames_nowait(frame)  # acp2's encoder wrote it: no raw newline
        else:
            try:
                self.project(session, update)
            except ConnectionClosed:
                raise  # the emitter's concern: it drops the update
            except Exception:  # as a notification handler's failure: the agent never sees it
                logger.exception("v1 bridge: projecting a %s failed", type(update).__name__)

    def _hold(self, params: v2.UpdateSessionNotification) -> None:
        """Keep an update of a session not answered yet, bounded: at most
        :data:`MAX_UNOPENED_UPDATES` per id and :data:`MAX_UNOPENED_SESSIONS` ids (the
        oldest id goes). Updates of ids that are never opened -- a child session (v1 has
        no subagents), or a hostile agent's -- are dropped and counted, never kept
        without bound."""
        held = self._unopened.get(params.session_id)
        if held is None:
            if len(self._unopened) >= MAX_UNOPENED_SESSIONS:
                oldest = next(iter(self._unopened))
                self._drops["unopened_session_update"] += len(self._unopened.pop(oldest))
            held = self._unopened[params.session_id] = []
        if len(held) >= MAX_UNOPENED_UPDATES:
            self._drops["unopened_session_update"] += 1
            return
        held.append(params)

    def _send(self, session: BridgeSession, params: v2.UpdateSessionNotification) -> None:
        if session.projector.verbatim(params):
            # A plain text chunk is the same JSON in both versions: encoded once, as v1.
            self.v1.send_frame_nowait(session.frame_head + encode(params.update) + b"}}")
            return
        self.project(session, params.update)

    def project(self, session: BridgeSession, update: Any) -> None:
        """Send what v1 says of ``update`` (a v2 session update of ``session``, open and
        not held back), then note it in the session's turns: an ``idle`` answers its
        held prompt here, behind anything said before it."""
        if type(update) in CHILD_KINDS:
            self._about_child(session, update)
            return
        # A tool call may name a child: noted only once a child is known (O(1) otherwise).
        folder = self._folder
        if type(update) in _CALL_KINDS and folder:
            folder.note(session.projector.session_id, update)
        for note in session.projector.project(update):
            self.v1.send_notification_nowait(v1m.SESSION_UPDATE, note)
        session.turns.observe(update)

    def _about_child(self, session: BridgeSession, update: Any) -> None:
        """An update about a child or a message between sessions (Preview subagents):
        sent as it is to a client that opted in (a new child's own session opened, so
        its updates pass); else counted, and the child noted for folding."""
        if self._folder is not None:
            self._folder.note(session.projector.session_id, update)
            self._drops[str(type(update).__struct_config__.tag)] += 1
            return
        if type(update) is v2.SubagentUpdate and update.session_id not in self.sessions:
            child = self.session(update.session_id)
            child.backlog = self._unopened.pop(update.session_id, [])
            self.task_group.start_soon(self._flush, child)  # after the announcement
        note = v1.SessionNotification(
            session_id=session.projector.session_id, update=Raw(encode(update))
        )
        self.v1.send_notification_nowait(v1m.SESSION_UPDATE, note)

    def _fold(self, params: v2.UpdateSessionNotification) -> None:
        """An update of a child a client without the opt-in does not know: its text goes
        into the parent's tool call that names the child
        (:mod:`acp2.compat.v1.project_children`)."""
        folder = self._folder
        folded = folder.fold(params.session_id, params.update) if folder is not None else None
        if folded is not None:
            parent_id, chunk = folded
            self.deliver(v2.UpdateSessionNotification(session_id=parent_id, update=chunk))

    async def _flush(self, session: BridgeSession) -> None:
        backlog = session.backlog or []
        while backlog:
            self._send(session, backlog.pop(0))
            if self.v1.congested:
                await self.v1.drain()
        session.backlog = None

    async def on_permission(
        self, params: v2.RequestPermissionRequest
    ) -> v2.RequestPermissionResponse:
        """Ask the v1 client; anything but an offered option is ``cancelled``. A folded
        child's request is asked in its parent's session (the client knows no other)."""
        folder = self._folder
        parent = folder.parent_of(params.session_id) if folder is not None else None
        if parent is not None:
            params = msgspec.structs.replace(params, session_id=parent)
        request = self.session(params.session_id).projector.permission(params)
        answer = await self.v1.call(v1m.SESSION_REQUEST_PERMISSION, request)
        offered = {option.option_id for option in request.options}
        return side.permission_result_from_v1(answer, offered)


async def run_front(v1_transport: Transport, v2_transport: Transport) -> Drops:
    """Bridge a v1 client on ``v1_transport`` to a v2 agent on ``v2_transport`` until
    either side closes; then close both. Returns what was not sent to the client."""
    async with (
        Connection(v2_transport, name="agent") as v2conn,
        Connection(v1_transport, name="client") as v1conn,
        anyio.create_task_group() as tg,
    ):
        bridge = FrontBridge(v1conn, v2conn, tg)
        bridge.register()
        for conn in (v1conn, v2conn):
            tg.start_soon(_close_all_when_closed, conn, tg.cancel_scope)
    dropped = bridge.dropped()
    if dropped:
        logger.debug("v1 bridge: not sent to the v1 client: %s", dict(dropped))
    return dropped


async def _close_all_when_closed(conn: Connection, scope: anyio.CancelScope) -> None:
    await conn.wait_closed()
    scope.cancel()


async def serve_v1_client(serve_v2: ServeV2, transport: Transport) -> None:
    """Serve an agent to a v1 client on ``transport`` until the client goes away.

    ``serve_v2(end)`` is the agent runtime serving one v2 connection (its principal
    already bound); the runtime passes it in, so the bridge, a layer below the runtimes,
    never imports the agent (``tests/test_layers.py``).

    The agent runtime and the bridge share this process, so they meet over
    :func:`~acp2.bridge.inprocess.inprocess_pair`: the bridge calls the runtime's handlers and
    gets its results as objects, and the agent's updates reach the projection as the
    objects it emits, in the call that emits them (:meth:`FrontBridge.take`): plain text
    chunks pass as the bytes the emitter encoded, nothing is decoded again, and the idle
    that ends a turn answers its held v1 prompt in that call."""
    async with Connection(transport, name="client") as v1conn, anyio.create_task_group() as tg:
        agent_end, bridge_end = inprocess_pair(v1conn)
        bridge = FrontBridge(v1conn, bridge_end, tg)
        # The producer (the agent's emitter) sees the v1 connection's backpressure itself.
        # Its updates come as objects (take); the frames it sends as bytes (a held replay,
        # a prompt's user message) are decoded by the link and delivered.
        bridge.register(update=bridge.deliver)
        agent_end.send_updates_through(bridge.take)
        try:
            await serve_v2(agent_end)
        finally:
            tg.cancel_scope.cancel()
    dropped = bridge.dropped()
    if dropped:
        logger.debug("v1 bridge: not sent to the v1 client: %s", dict(dropped))

"""A :class:`ClientSession`: one agent session as the client sees and drives it.

Every ``session/update`` for the session is reduced into :attr:`ClientSession.state`
(:mod:`acp2.state`), handed to the active :class:`~acp2.client.work.Work` objects and to
the listeners, in arrival order -- also while the session is idle (PL-12).

A session talks to its connection only through the :class:`~acp2.client.core.ClientCore`
it was made with (what it may ask), and the link talks to it only through the methods of
:class:`~acp2.client.core.SessionFeed` (what the connection feeds it). Those, and the
methods a :class:`Work` is fed with, are internal: public names so no object reaches into
another's private state, documented as "internal" and not part of the API.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Awaitable, Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

import msgspec
from msgspec import Raw

from acp2 import _aio
from acp2.client.checks import check_prompt, session_capabilities
from acp2.client.core import ClientCore, update_bytes
from acp2.client.elicitation import CANCEL, ElicitationPolicy, ElicitationRequest, run_policy
from acp2.client.env import SessionEnv
from acp2.client.pending import PendingPermissions
from acp2.client.permissions import PermissionRequest
from acp2.client.work import Work
from acp2.errors import LocalProtocolError, ResourceNotFound
from acp2.schema import (
    AgentMessageChunk,
    AvailableCommandsUpdate,
    CancelSessionNotification,
    CancelTerminalRequest,
    CancelToolCallRequest,
    CloseSessionRequest,
    ConfigOptionUpdate,
    CreateElicitationResponse,
    ElicitationFormMode,
    ElicitationUrlMode,
    PromptRequest,
    PromptResponse,
    ReplayComplete,
    RequestPermissionRequest,
    RequestPermissionResponse,
    SetSessionConfigOptionRequest,
    StateUpdate,
    SubagentUpdate,
    TextContent,
)
from acp2.schema.codec import decode
from acp2.schema.methods import (
    SESSION_CANCEL,
    SESSION_CLOSE,
    SESSION_PROMPT,
    SESSION_SET_CONFIG_OPTION,
    TERMINAL_CANCEL,
    TOOL_CALL_CANCEL,
)
from acp2.state import (
    ReplayMerge,
    SessionState,
    apply_permission_subject,
    cancel_advertised,
    mark_cancelled,
    reduce,
    reduce_agent_text,
)

if TYPE_CHECKING:
    from acp2.schema.extensions import AttachRole

__all__ = ["ClientSession", "UpdateListener", "new_idempotency_key"]

log = logging.getLogger("acp2.client")

#: A prompt's waiter: the reader resolves it with the raw answer (or the error) in the
#: call that dispatches the answer (:meth:`acp2.rpc.Connection.request`).
_Answer: TypeAlias = "_aio.Waiter[tuple[Raw | None, Exception | None]]"

_SEED_KINDS = (AvailableCommandsUpdate, ConfigOptionUpdate)

#: Called inline with each update of the session (typed) and its exact JSON bytes.
UpdateListener: TypeAlias = Callable[[Any, bytes], None]


def new_idempotency_key() -> str:
    """A fresh ``idempotencyKey`` for one prompt (a random version-4 UUID in its usual
    text form, unique per prompt): keep it to retry that prompt with
    :meth:`ClientSession.prompt`."""
    # str(uuid.uuid4()) spelled out: the same 122 random bits and fixed version and
    # variant bits, without building a UUID object (1.9 -> 0.8 us, once per prompt).
    h = os.urandom(16).hex()
    variant = "89ab"[int(h[16], 16) & 3]
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{variant}{h[17:20]}-{h[20:]}"


class ClientSession:
    """A session on a :class:`~acp2.client.ClientConnection`.

    ``id`` is the agent's session id, ``cwd`` its working directory, ``state`` the
    reduced :class:`~acp2.state.SessionState` (read-only for callers), ``env`` what it
    reads of its connection (:class:`~acp2.client.env.SessionEnv`: the agent's
    capabilities, the permission policy; a session holds no pointer to the connection
    itself), ``closed`` True after :meth:`close`, ``replaying`` True while the updates
    handed to the listeners are a resume's replayed history (False for everything live),
    ``replay_truncated`` True once such a replay ended truncated (see below),
    ``role`` ``"controller"`` or, for a session attached to watch, ``"observer"``.
    Create one with ``new_session``, ``resume`` or ``attach``.
    """

    # Class-level defaults, set per instance only when a replay needs them, so that a
    # session carries no more state for them until then.
    #: True once a replay this session got ended truncated (taken back when its marker
    #: still comes, late: see ``_late_marker``): without its
    #: ``replay_complete`` and without a successful answer (or, for a child announced in
    #: its parent's replay, without its own marker while the parent got one). The state
    #: then keeps what it held (nothing is dropped as "not replayed").
    replay_truncated: bool = False
    #: For a child whose replay runs inside its parent's: the parent's marker count when
    #: it began (a marker since then means the agent sends them, so the child's own was
    #: owed). None for every other session.
    _parent_marks: tuple[ClientSession, int] | None = None

    def __init__(
        self,
        env: SessionEnv,
        link: ClientCore[ClientSession],
        session_id: str,
        cwd: str,
        *,
        state: SessionState | None = None,
    ) -> None:
        self.env = env
        self.id = session_id
        self.cwd = cwd
        self.state = SessionState(session_id=session_id) if state is None else state
        self.closed = False
        #: How this client holds the session (``ClientConnection.attach``).
        self.role: AttachRole = "controller"
        #: True for a session joined with ``ClientConnection.attach`` (a reconnect
        #: attaches it again rather than resuming it).
        self.attached = False
        #: True while the updates being delivered are a resume's replayed history (see
        #: :meth:`ClientConnection.resume <acp2.client.ClientConnection.resume>`).
        self.replaying = False
        #: Reduces the replay into a state the client already held (None: a fresh one).
        self._merge: ReplayMerge | None = None
        #: The resume request's waiter: done once its response was dispatched, which ends
        #: the replay of an agent that sends no ``replay_complete``.
        self._answered: asyncio.Future[Any] | None = None
        self._link = link
        self._works: list[Work] = []
        #: The ``session/prompt`` requests whose answer this session has not taken yet:
        #: each work with the waiter the reader resolves with its response.
        self._asking: list[tuple[Work, _Answer]] = []
        self._listeners: list[UpdateListener] = []
        self._permissions = PendingPermissions(link.start_soon)
        #: The event waiters sleep on (None: nobody waits). A plain asyncio.Event: one
        #: per wake-up, and an anyio.Event costs ~2 us to create.
        self._changed: asyncio.Event | None = None
        #: Why the session can no longer be used (connection gone, or closed); its works
        #: read it too, through the wait function they were given.
        self._failure: BaseException | None = None
        #: Snapshot kinds already received (they win over a new/resume response, SS-25).
        self._seeded: dict[type, None] = {}  # a set; an empty dict is 152 bytes smaller
        #: The child sessions this session announced (Preview subagents), by id, in order
        #: (:mod:`acp2.client.children`).
        self.children: dict[str, ClientSession] = {}

    def __repr__(self) -> str:
        return f"ClientSession(id={self.id!r}, foreground={self.state.foreground!r})"

    # -- updates ---------------------------------------------------------------------------

    def add_listener(self, listener: UpdateListener) -> Callable[[], None]:
        """Call ``listener(update, raw_json)`` for every later update of this session, after
        it is reduced; returns a function that removes the listener. Keep it quick: it runs
        inline in the connection's reader. Exceptions are logged, not raised."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def deliver(self, update: Any, raw_params: bytes | None) -> Awaitable[None] | None:
        """Internal (:class:`~acp2.client.core.SessionFeed`): take one update from the
        connection's reader; ``raw_params`` are the notification's params bytes, from which
        the update's own bytes are cut only when a listener needs them (None: there are
        none, and the update is encoded for such a listener).

        Returns None: every update is taken in this call, so the reader need not yield
        for ordering (an ``idle`` that arrives while a prompt waits for its answer first
        accepts the prompts answered before it, :meth:`_take_answers`). A plain
        function: no coroutine per update.
        """
        if self.replaying:
            return self._deliver_replayed(update, raw_params)
        if self._listeners:
            return self._deliver_in_full(update, raw_params)
        # :meth:`receive` without listeners, inlined: the hot path of a streaming session,
        # where one more call per update costs a few percent of the client's CPU.
        kind = type(update)
        if kind is AgentMessageChunk and reduce_agent_text(self.state, update):
            for work in self._works:  # plain text: never an idle, and the block needs no check
                work.record_text(update)
        elif kind is StateUpdate:
            self._take_state(update)
        else:
            self._reduce_and_record(kind, update)
        if self._changed is not None:
            self._wake()
        return None

    def _deliver_replayed(self, update: Any, raw_params: bytes | None) -> Awaitable[None] | None:
        """:meth:`deliver` while a resume's replay runs: the replay ends at its
        ``replay_complete`` or, from an agent that sends none, at the resume response
        (an update dispatched after it is live, even one read together with it)."""
        if type(update) is ReplayComplete:
            self.end_replay(complete=True)  # the marker itself is not history
            return self.deliver(update, raw_params)
        answered = self._answered
        if answered is not None and answered.done():  # the response was read before this
            # A cancelled waiter: the caller gave the resume up (no result to read).
            ok = not answered.cancelled() and answered.result()[1] is None
            self.end_replay(complete=ok and not self.marker_owed())
            return self.deliver(update, raw_params)
        merge = self._merge
        if merge is not None and merge.absorb(self.state, update):
            # Already held before the resume: rebuilt in the state, not news to anyone.
            if self._changed is not None:
                self._wake()
            return None
        return self._deliver_in_full(update, raw_params)

    def begin_child_replay(self, child: ClientSession) -> None:
        """Internal (:mod:`acp2.client.children`): ``child`` was announced in this
        session's replay: its own replay runs until its marker or this resume's answer."""
        answered = self._answered
        if self.replaying and answered is not None and not child.replaying:
            child.begin_replay(answered, parent=self)

    def begin_replay(
        self, answered: asyncio.Future[Any], *, parent: ClientSession | None = None
    ) -> None:
        """Internal: the updates from now on are the replay of the resume whose request
        waits on ``answered`` (with ``parent``: announced in that session's replay);
        what :attr:`state` already holds is rebuilt, not doubled
        (:class:`~acp2.state.ReplayMerge`)."""
        if parent is not None:
            self._parent_marks = (parent, parent.state.replays)
        held = self.state.timeline or self.state.terminals or self.state.unknown
        self._merge = ReplayMerge(self.state) if held else None
        self._answered = answered
        self.replaying = True

    def end_replay(self, *, complete: bool) -> None:
        """Internal: the replay is over: ``complete`` at its marker or a successful
        answer (then held entries it did not name go, see
        :meth:`~acp2.state.ReplayMerge.finish`), not after a failure. Idempotent."""
        merge = self._merge
        if merge is not None and complete:
            merge.finish(self.state)
        if self.replaying and not complete:
            self.replay_truncated = True
            log.warning("the replay of session %s was truncated", self.id)
        if self._parent_marks is not None:
            self._parent_marks = None
        self.replaying = False
        self._merge = None
        self._answered = None

    def _late_marker(self) -> None:
        """A ``replay_complete`` after the replay was ended truncated: the replay did
        finish, its end only came after the resume's answer. Over Streamable HTTP a
        child's replay travels on the child's own stream, which no order ties to the
        parent's (the answer can overtake it), so the flag is taken back."""
        self.replay_truncated = False
        log.info("the replay of session %s completed after its resume was answered", self.id)

    def marker_owed(self) -> bool:
        """Internal: True for a child replaying inside its parent's replay once the parent
        got a ``replay_complete`` (the agent sends markers: the child's was owed too)."""
        marks = self._parent_marks
        return marks is not None and marks[0].state.replays > marks[1]

    def _deliver_in_full(self, update: Any, raw_params: bytes | None) -> Awaitable[None] | None:
        raw = b""
        if self._listeners:
            found = update_bytes(update, raw_params)
            if found is None:
                return None
            raw = found
        self.receive(update, raw)
        return None

    def receive(self, update: Any, raw: bytes) -> None:
        """Internal (:class:`~acp2.client.core.SessionFeed`): reduce one update, then hand
        it to the active works and the listeners (``raw``: its exact JSON bytes).

        The hot path of a streaming session: plain calls only, and at most one wake-up
        per batch of updates the reader handles without pausing.
        """
        kind = type(update)
        if kind is AgentMessageChunk and reduce_agent_text(self.state, update):
            for work in self._works:  # plain text: never an idle, and the block needs no check
                work.record_text(update)
        elif kind is StateUpdate:
            self._take_state(update)
        else:
            self._reduce_and_record(kind, update)
        if self._listeners:
            for listener in list(self._listeners):
                try:
                    listener(update, raw)
                except Exception:
                    log.exception("update listener failed in session %s", self.id)
        if self._changed is not None:
            self._wake()

    def _take_answers(self) -> None:
        """Accept every prompt whose answer the reader has already dispatched: an idle is
        about to be received, and which work it ends depends on where it sits in the
        stream relative to the ``session/prompt`` answers (before a prompt's answer it
        ends earlier work, after it the prompt's own).

        Ordering holds by construction: the reader resolves a prompt's waiter in the call
        that dispatches its answer, before it dispatches the next message, so at this
        idle a done waiter means "answered earlier on the wire". The work is accepted
        here, in the reader's call, whenever the prompting task gets to run; a failed
        answer takes its work out of the session here too.
        """
        waiting: list[tuple[Work, _Answer]] = []
        for asking in self._asking:
            work, answered = asking
            if not answered.done() or answered.cancelled():
                waiting.append(asking)
                continue
            result, error = answered.result()
            response = None if error is not None else _prompt_response(result)
            if response is None:  # the prompting task raises; the work is not the idle's
                if work in self._works:
                    self._works.remove(work)
            elif not work.accepted:
                work.accept(_message_id(response))
        self._asking = waiting

    def _take_state(self, update: StateUpdate) -> None:
        """:meth:`receive` for a ``state_update`` (a few in every turn): an ``idle``
        first accepts the prompts answered before it (:meth:`_take_answers`)."""
        if self._asking and update.state == "idle":
            self._take_answers()
        reduce(self.state, update)
        works = self._works
        if works:
            finished = False
            for work in works:
                finished = work.record_state(update) or finished
            if finished:
                self._works = [work for work in works if not work.done]

    def _reduce_and_record(self, kind: type, update: Any) -> None:
        """:meth:`receive` for every update but a plain agent text chunk and a
        ``state_update``."""
        reduce(self.state, update)
        if kind in _SEED_KINDS:
            self._seeded[kind] = None
        elif kind is SubagentUpdate:
            from acp2.client.children import adopt  # here: children imports this module

            adopt(self, update, self._link)
        elif kind is ReplayComplete and self.replay_truncated:
            self._late_marker()
        works = self._works
        if works:
            finished = False
            for work in works:
                finished = work.record(update) or finished
            if finished:
                self._works = [work for work in works if not work.done]

    def seed(self, commands: Any, options: Any) -> None:
        """Internal: take the commands and config options of the ``session/new`` or
        ``session/resume`` response, unless an update already set them (SS-25, D-19)."""
        if AvailableCommandsUpdate not in self._seeded and isinstance(commands, list):
            self.state.available_commands = list(commands)
        if ConfigOptionUpdate not in self._seeded and isinstance(options, list):
            self.state.config_options = list(options)

    def _wake(self) -> None:
        # Set the event the current waiters sleep on, once; the next wait makes a new one.
        # Updates that arrive before a woken waiter runs cost nothing here.
        changed, self._changed = self._changed, None
        if changed is not None:
            changed.set()

    async def _wait_change(self) -> None:
        """Wait for the next update (or failure); raise the failure if there is one."""
        if self._failure is not None:
            raise self._failure
        changed = self._changed
        if changed is None:
            changed = self._changed = asyncio.Event()
        await changed.wait()
        if self._failure is not None:
            raise self._failure

    async def wait_ended(self) -> BaseException:
        """Wait until the session can no longer be used -- its connection is gone (for a
        remote agent: and could not be resumed) or it was closed -- and return why (the
        error its works raise). Returns at once for a session that already ended."""
        while self._failure is None:
            try:
                await self._wait_change()
            except BaseException as exc:
                if exc is not self._failure:
                    raise
        return self._failure

    def fail(self, exc: BaseException) -> None:
        """Internal (:class:`~acp2.client.core.SessionFeed`): the connection is gone (or
        the session closed): every waiter raises ``exc``, every pending permission request
        is answered ``cancelled``."""
        if self._failure is None:
            self._failure = exc
        self._permissions.cancel_all()
        self._wake()

    # -- prompting -------------------------------------------------------------------------

    async def prompt(
        self, prompt: str | Sequence[Any], *, idempotency_key: str | None = None
    ) -> Work:
        """Send ``session/prompt`` and return the :class:`Work` once the agent accepted it.

        ``prompt`` is text or a list of content blocks. Raises ``LocalProtocolError``
        (sending nothing) for an empty prompt or content the agent did not advertise
        (PL-02), the agent's ``RequestError`` if it refuses the prompt (``-32800``: it was
        withdrawn by a cancel), ``ConnectionClosed`` if the agent goes away.

        Every prompt carries an ``idempotencyKey`` (the Preview's exactly-once prompts):
        ``idempotency_key``, or a fresh random one (:func:`new_idempotency_key`); the
        work's :attr:`Work.idempotency_key` says which. When this call fails without an
        answer -- ``ConnectionClosed``, or a timeout around it -- the prompt may or may not
        have been inserted. To find out without running it twice, send the same prompt
        with the same key again (on a resumed session after a reconnect): an agent that
        honours keys inserts it **at most once** and answers the retry with the original
        ``messageId`` (the work then started by the first attempt is not restarted; after
        an agent crash it may be lost, never doubled). So pass your own key whenever you
        may want to retry. A key reused with a different prompt is refused (``-32602``).
        An agent that ignores keys (older drafts) may insert a retry again.
        """
        self._check_open()
        if isinstance(prompt, str):  # one text block: every agent with sessions takes it
            blocks: list[Any] = [TextContent(text=prompt)]
            session_capabilities(self.env.agent_capabilities)
        else:
            blocks = list(prompt)
            check_prompt(self.env.agent_capabilities, blocks)
        key = new_idempotency_key() if idempotency_key is None else idempotency_key
        work = Work(self, self._wait_change)
        work.idempotency_key = key
        self._works.append(work)
        asking = (work, _aio.new_waiter())
        self._asking.append(asking)
        request = PromptRequest(session_id=self.id, prompt=blocks, idempotency_key=key)
        try:
            response = await self._link.call(SESSION_PROMPT, request, waiter=asking[1])
        except BaseException:
            if work in self._works:
                self._works.remove(work)
            raise
        finally:
            if asking in self._asking:
                self._asking.remove(asking)
        if not work.accepted:  # else an idle read after the answer accepted it already
            work.accept(_message_id(response))
        if work.done and work in self._works:
            self._works.remove(work)
        return work

    async def cancel(self, *, wait: bool = True) -> None:
        """Cancel the session's foreground work.

        In one step: send ``session/cancel``, mark the current work's unfinished tool calls
        ``cancelled`` (PL-15) and answer every pending permission request ``cancelled``
        (PL-16), except those about tool calls the agent lists as background work (D-15).
        Then, with ``wait``, return once every accepted work has reported its idle
        and the session is idle (PL-18). Raises ``ConnectionClosed`` if the agent goes away,
        and ``LocalProtocolError`` (sending nothing) for a session attached as an observer:
        the agent ignores an observer's cancel, and a notification has no error answer.
        """
        self._check_open()
        if self.role == "observer":
            raise LocalProtocolError(
                f"session {self.id} is attached as an observer: it cannot cancel"
            )
        self._link.notify_nowait(SESSION_CANCEL, CancelSessionNotification(session_id=self.id))
        mark_cancelled(self.state)
        self._permissions.cancel_foreground(self.state)
        self._wake()
        while wait and (self.state.busy or any(w.accepted for w in self._works)):
            await self._wait_change()

    async def cancel_tool_call(self, tool_call_id: str) -> None:
        """Ask the agent to cancel one tool call with ``tool_call/cancel`` (TC-13), e.g.
        background work listed in ``state.background``; the foreground is not touched.

        Returns once the agent accepted; the call's final ``tool_call_update`` (normally
        ``cancelled``) confirms it later. Raises ``LocalProtocolError`` (sending nothing)
        unless the call currently advertises ``capabilities.cancel`` -- ACP v1 agents and
        Aug-draft agents never do -- and the agent's ``RequestError`` if it refuses."""
        self._check_open()
        _check_cancellable(self.state.tool_calls.get(tool_call_id), "tool call", tool_call_id)
        params = CancelToolCallRequest(session_id=self.id, tool_call_id=tool_call_id)
        await self._link.call(TOOL_CALL_CANCEL, params)

    async def cancel_terminal(self, terminal_id: str) -> None:
        """Ask the agent to stop one terminal's process with ``terminal/cancel`` (TM-10);
        its ``exitStatus`` confirms it later, the terminal is not released. Raises as
        :meth:`cancel_tool_call` does."""
        self._check_open()
        _check_cancellable(self.state.terminals.get(terminal_id), "terminal", terminal_id)
        params = CancelTerminalRequest(session_id=self.id, terminal_id=terminal_id)
        await self._link.call(TERMINAL_CANCEL, params)

    async def set_config_option(self, config_id: str, value: str | bool) -> None:
        """Set the config option ``config_id`` with ``session/set_config_option``: a select
        option to the value id ``value`` (a ``str``), a boolean option to ``value`` (a
        ``bool``). The answer's complete option list replaces ``state.config_options``.
        Raises the agent's ``RequestError`` when it refuses, ``ConnectionClosed`` if it
        goes away."""
        self._check_open()
        kind: Literal["boolean", "id"] = "boolean" if isinstance(value, bool) else "id"
        params = SetSessionConfigOptionRequest(
            session_id=self.id, config_id=config_id, type=kind, value=value
        )
        response = await self._link.call(SESSION_SET_CONFIG_OPTION, params)
        self.state.config_options = list(response.config_options)

    # -- permissions -----------------------------------------------------------------------

    async def answer_permission(
        self, params: RequestPermissionRequest
    ) -> RequestPermissionResponse:
        """Internal (:class:`~acp2.client.core.SessionFeed`): serve one
        ``session/request_permission`` for this session with the connection's permission
        policy (PR-01..PR-10)."""
        apply_permission_subject(self.state, params.subject)
        request = PermissionRequest(self, params)
        pending = self._permissions.open(request, self.env.permission_policy)
        self._wake()  # waiters see the request's tool call patch and the pending request
        return await self._permissions.answer(pending)

    async def answer_elicitation(
        self, params: ElicitationFormMode | ElicitationUrlMode, policy: ElicitationPolicy
    ) -> CreateElicitationResponse:
        """Internal (:class:`~acp2.client.core.SessionFeed`): serve one session-scoped
        ``elicitation/create`` with ``policy``: answered exactly once, action ``cancel``
        on :meth:`cancel` (unless about a background tool call), close, a lost
        connection or the agent's ``$/cancel_request`` (EL-14)."""
        request = ElicitationRequest(self, params)
        cancelled: CreateElicitationResponse = CANCEL
        decide = partial(run_policy, policy, request)
        pending = self._permissions.open_with(params, cancelled, decide)
        self._wake()
        return await self._permissions.answer(pending)

    # -- closing ---------------------------------------------------------------------------

    async def close(self) -> None:
        """Send ``session/close`` (the agent cancels the session's work first, SS-22) and
        detach the session from the connection; ``-32002`` counts as success (D-16).
        Works still waiting for their idle raise ``LocalProtocolError``. Idempotent."""
        if self.closed:
            return
        if not self._link.closed:
            with contextlib.suppress(ResourceNotFound):
                await self._link.call(SESSION_CLOSE, CloseSessionRequest(session_id=self.id))
        self.closed = True
        self._link.detach(self)
        gone = LocalProtocolError(f"session {self.id} was closed")
        if self.children:
            from acp2.client.children import release

            release(self, gone, self._link)
        self.fail(gone)

    def _check_open(self) -> None:
        if self.closed:
            raise LocalProtocolError(f"session {self.id} is closed")
        if self._failure is not None:
            raise self._failure


def _prompt_response(result: Raw | None) -> PromptResponse | None:
    """The decoded answer of a ``session/prompt``, or None when it is malformed (the
    prompting task then raises ``RemoteProtocolError`` for it)."""
    if result is None:
        return None
    try:
        return decode(result, PromptResponse)  # as the connection decodes it
    except (msgspec.DecodeError, RecursionError):
        return None


def _message_id(response: PromptResponse) -> str | None:
    message_id = response.message_id
    return message_id if isinstance(message_id, str) else None


def _check_cancellable(entity: Any, what: str, item_id: str) -> None:
    """Raise ``LocalProtocolError`` unless ``entity`` advertises ``cancel`` (TC-13)."""
    if entity is None:
        raise LocalProtocolError(f"no {what} {item_id!r} in this session")
    if not cancel_advertised(entity):
        raise LocalProtocolError(
            f"the {what} {item_id!r} cannot be cancelled: it has ended or does not "
            "advertise capabilities.cancel (ACP v1 agents never do)"
        )

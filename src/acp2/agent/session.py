"""One live session on the agent side: its prompt queue, foreground state and cancellation.

Prompt ordering is decided here. A prompt that arrives while foreground work is running is
*held*: its ``session/prompt`` request stays pending (Nov PL-22) until the running work has
ended with its idle, then it is inserted and answered, and it starts its own foreground
work. Two prompts never interleave their lifecycles, and each piece of foreground work ends
with exactly one idle carrying a stop reason. ``session/cancel`` withdraws held prompts
(answered ``-32800``) and cancels the running work, which then ends idle ``cancelled``.
The rules of the queue are a pure state machine (:mod:`acp2.agent.queue`); this class
feeds it and does the waiting, waking and cancel scopes.
"""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import anyio

from acp2 import _aio
from acp2.agent.background import SessionBackground, Spawner
from acp2.agent.emitter import Emitter
from acp2.agent.queue import PromptQueue, Ticket
from acp2.errors import LocalProtocolError, RequestCancelled
from acp2.lifecycle import CANCELLED, END_TURN, ERROR, Event, ForegroundMachine, ForegroundState
from acp2.schema import StateUpdate

if TYPE_CHECKING:
    from acp2.agent.handles import ToolCallHandle
    from acp2.agent.mcp.hub import SessionMcp
    from acp2.agent.messaging import ReceivedMessage, SessionMessageHandle
    from acp2.agent.turn import Turn
    from acp2.schema import SessionConfigOption

__all__ = ["AgentSession", "ChildSpawner", "MessageKind", "SessionShared", "WorkStarter"]

#: The kinds of message id a session makes (the id's prefix).
MessageKind = Literal["user", "agent", "thought", "session"]

#: How a session starts agent-initiated work: the connection serving it provides this.
WorkStarter = Callable[["AgentSession", Callable[["Turn"], Awaitable[str | None]]], Awaitable[None]]
#: How a session spawns a child (parent, title, description, cancellable): its manager
#: provides this.
ChildSpawner = Callable[
    ["AgentSession", "str | None", "str | None", bool], Awaitable["AgentSession"]
]


@dataclass(slots=True)
class SessionShared:
    """The state of one session id shared by every connection that serves it, for the life
    of the process: the author's ``data`` dict and the current config options (None until
    the runtime first asked ``Agent.config_options``)."""

    data: dict[str, Any] = field(default_factory=dict)
    config_options: list[SessionConfigOption] | None = None
    #: True once a state update of the session carried ``background`` (PL-25: from then
    #: on every one does, also on a connection that resumes it later).
    reports_background: bool = False


class AgentSession:
    """A session the agent serves on one connection.

    Attributes the prompt handler may read: ``id``, ``cwd``, ``additional_directories``,
    ``mcp_servers`` (as sent by the client), ``data`` (a dict for the author's own state,
    kept for the life of the process: a resume, even on another connection, gets the same
    dict; not stored on disk), ``config_options`` and ``state`` (``idle`` / ``running`` /
    ``requires_action``). ``shared`` is the state every connection serving this session id
    shares (:class:`SessionShared`, kept by :mod:`acp2.agent.runtime`); ``start_work`` is
    given by the connection that serves the session, ``spawn`` too (it runs detached
    background bodies). ``background`` is the session's
    :class:`~acp2.agent.background.SessionBackground` on this connection.
    """

    # Class-level defaults, set per instance only when used (subagents), so that the
    # sessions that never use them carry no more per-session state.
    #: The stop reason of the last idle this session reported, for a child session
    #: (None before one, and for a session that has no parent).
    last_stop_reason: str | None = None
    # Messages other sessions sent this one (:attr:`inbox`), and their waiters' event.
    _inbox: list[ReceivedMessage] | None = None
    _inbox_changed: anyio.Event | None = None

    def __init__(
        self,
        session_id: str,
        cwd: str,
        additional_directories: list[str],
        mcp_servers: list[Any],
        emitter: Emitter,
        *,
        shared: SessionShared | None = None,
        start_work: WorkStarter | None = None,
        spawn: Spawner | None = None,
        spawn_child: ChildSpawner | None = None,
    ) -> None:
        self.id = session_id
        self.cwd = cwd
        self.additional_directories = additional_directories
        self.mcp_servers = mcp_servers
        # The session's MCP servers (:attr:`mcp`), made on first use: most have none.
        self._mcp: SessionMcp | None = None
        self._mcp_spawn = spawn
        self.shared = shared if shared is not None else SessionShared()
        self.data: dict[str, Any] = self.shared.data
        self.emitter = emitter
        # A send that finds the connection closed cancels the work (the client is gone).
        emitter.cancels = self
        self.machine = ForegroundMachine()
        self.closed = False
        self._starter = start_work
        self._child_spawner = spawn_child
        #: The session that spawned this one (a child session, Preview subagents), or None.
        self.parent: AgentSession | None = None
        #: The child sessions this session spawned, in order.
        self.children: list[AgentSession] = []
        #: Whether the client may cancel this child's work (its advertised capability).
        self.cancellable = True
        #: Called with every state this session reports (a child mirrors it on its parent).
        self.mirror: Callable[[StateUpdate], None] | None = None
        self._queue = PromptQueue()
        self._waiters: dict[Ticket, anyio.Event] = {}
        self._current: object | None = None
        self._scope: anyio.CancelScope | None = None
        # Created only when wait_idle has to wait: an event per session (~0.9 KiB with
        # its waiter deque) and per prompt (~2 µs) for what session/close alone awaits.
        self._work_done: anyio.Event | None = None
        self._busy = False
        self.background = SessionBackground(spawn, self._background_changed)
        self.background.reported = self.shared.reports_background

    @property
    def mcp(self) -> SessionMcp:
        """The session's MCP servers, connected for the handler (see :mod:`acp2.agent.mcp`)."""
        mcp = self._mcp
        if mcp is None:
            # Imported here: an agent whose sessions have no servers never loads it.
            from acp2.agent.mcp.hub import SessionMcp

            mcp = self._mcp = SessionMcp(self.mcp_servers, self.roots, self._mcp_spawn)
        return mcp

    @property
    def has_mcp(self) -> bool:
        """True when the session has MCP servers, or had some running (a resume may take
        them away): only then is :attr:`mcp` made."""
        return bool(self.mcp_servers) or self._mcp is not None

    @property
    def state(self) -> ForegroundState:
        """The foreground state last reported: ``idle``, ``running`` or ``requires_action``."""
        return self.machine.state

    @property
    def config_options(self) -> list[SessionConfigOption] | None:
        """The session's config options with their current values (None when the agent has
        none, or before the session was first answered)."""
        return self.shared.config_options

    @property
    def roots(self) -> list[str]:
        """The session's root set: ``cwd`` followed by the additional directories (SS-04)."""
        return [self.cwd, *self.additional_directories]

    def new_message_id(self, kind: MessageKind) -> str:
        """Return a fresh message id, unique across kinds and sessions (MU-02, D-25)."""
        return f"{kind}_{secrets.token_hex(8)}"

    async def send(self, update: Any) -> None:
        """Send a session update now, whatever the foreground state (PL-12: background
        updates while idle are allowed and change nothing)."""
        await self.emitter.emit_async(update)

    async def start_work(self, handler: Callable[[Turn], Awaitable[str | None]]) -> None:
        """Start agent-initiated foreground work: ``running`` ... one ``idle`` (PL-24).

        Waits for any running work to end first. ``handler`` gets a :class:`Turn` with an
        empty prompt and returns the stop reason.
        """
        if self._starter is None:
            raise LocalProtocolError("the session is not attached to a connection")
        await self._starter(self, handler)

    async def spawn_child(
        self,
        *,
        title: str | None = None,
        description: str | None = None,
        cancellable: bool = False,
        tool_call: ToolCallHandle | None = None,
    ) -> AgentSession:
        """Create a child session of this one (Preview subagents) and announce it to the
        client (``subagent_update``: ``title``, ``description``, ``capabilities.cancel``
        when ``cancellable``). Run work in it with :meth:`start_work`; its updates go out
        under its own id, its states are mirrored on this session's announcement. The
        client may not prompt, close or configure it. Closing this session closes it.

        ``tool_call``, a call of this session (the one delegating the work), gets a
        ``session`` content item naming the child right after the announcement, which is
        what lets a client show the child under that call.

        Raises ``LocalProtocolError`` (announcing nothing) when the session is not on a
        connection, already has :data:`acp2.agent.children.MAX_CHILDREN` children, or
        ``tool_call`` belongs to another session.
        """
        if self._child_spawner is None:
            raise LocalProtocolError("the session is not attached to a connection")
        if tool_call is not None and tool_call.session_id != self.id:
            raise LocalProtocolError(
                f"tool call {tool_call.tool_call_id} is not a call of session {self.id}"
            )
        child = await self._child_spawner(self, title, description, cancellable)
        if tool_call is not None:
            await tool_call.show_session(child.id)
        return child

    async def send_message(self, to: AgentSession, content: Any) -> SessionMessageHandle:
        """Send ``content`` (text, a content block, or a list of them) to ``to``, this
        session's parent or one of its own children, as a message between sessions: a
        ``session_message`` in each transcript, each naming the other copy. Returns a
        handle whose ``append`` streams more; ``to.inbox`` gets the message.

        Raises ``LocalProtocolError`` (sending nothing) when ``to`` is neither parent nor
        child, or either is closed (see :mod:`acp2.agent.messaging`)."""
        from acp2.agent.messaging import send_message  # here: only subagent authors use it

        return await send_message(self, to, content)

    @property
    def inbox(self) -> list[ReceivedMessage]:
        """The messages other sessions sent this one, oldest first: read it, do not
        change it. Only the agent's own sessions send them (no peer can), for the life
        of the session object."""
        return self._inbox if self._inbox is not None else []

    def receive_message(self, message: ReceivedMessage) -> None:
        """Internal (:mod:`acp2.agent.messaging`): keep ``message`` in :attr:`inbox` and
        wake :meth:`next_message`."""
        if self._inbox is None:
            self._inbox = []
        self._inbox.append(message)
        if self._inbox_changed is not None:
            self._inbox_changed.set()
            self._inbox_changed = None

    async def next_message(self, seen: int = 0) -> ReceivedMessage:
        """The message at position ``seen`` of :attr:`inbox`, waiting until it arrives
        (pass how many you have read)."""
        while len(self.inbox) <= seen:
            if self._inbox_changed is None:
                self._inbox_changed = anyio.Event()
            await self._inbox_changed.wait()
        return self.inbox[seen]

    # -- foreground state ---------------------------------------------------------

    def report(self, event: Event, **fields: Any) -> None:
        """Apply a lifecycle event (start / block / unblock / stop) and send the state.

        Raises LocalProtocolError (sending nothing) on a transition the lifecycle forbids.
        """
        before = self.machine.state
        after = self.machine.apply(event)
        if after != before or event == "stop":
            update = StateUpdate(state=after, background=self._listing(), **fields)
            if event == "stop" and self.parent is not None:
                self.last_stop_reason = fields.get("stop_reason")
            self.emitter.emit(update)
            if self.mirror is not None:
                self.mirror(update)

    def snapshot(self) -> StateUpdate:
        """The session's state as a ``state_update`` (with ``background`` once reported)."""
        return StateUpdate(state=self.machine.state, background=self._listing())

    def _listing(self) -> Any:
        listing = self.background.listing()
        if self.background.reported:
            self.shared.reports_background = True
        return listing

    def _background_changed(self) -> None:
        """Send a snapshot with the new background list -- except between a prompt's
        insertion and its ``running``, which carries the list anyway: an ``idle`` there
        would look like the end of the new work to a client."""
        if self._current is not None and not self.machine.busy:
            return
        self.emitter.emit(self.snapshot())

    # -- prompt slots (the queue decides; this side waits and wakes) ----------------

    async def acquire(self) -> bool:
        """Wait until this prompt may be inserted (FIFO). Raises RequestCancelled if withdrawn.

        When it returns, the caller owns the slot and must end with :meth:`release`.
        Returns True if the prompt was held (other work ran meanwhile), False if the
        slot was free (then nothing else ran: the call did not yield).
        """
        ticket = self._queue.acquire()
        if ticket.status == "running":
            self._busy = True
            return False
        if ticket.status == "refused":
            raise RequestCancelled("The session is closed")
        event = self._waiters[ticket] = anyio.Event()
        try:
            await event.wait()
        except BaseException:
            # Cancelled ($/cancel_request, shutdown) while held -- or just after the slot
            # was handed to us: then the queue passes it on, or it would stay taken forever.
            self._wake(self._queue.abandon(ticket))
            raise
        finally:
            del self._waiters[ticket]
        self._wake(self._queue.take(ticket))
        if not ticket.running:
            raise RequestCancelled("The prompt was withdrawn by session/cancel")
        return True

    def _wake(self, ticket: Ticket | None) -> None:
        """Wake the task of ``ticket``; note when the slot became free."""
        if ticket is not None:
            self._waiters[ticket].set()
        elif self._queue.state == "free":
            self._busy = False
            if self._work_done is not None:
                self._work_done.set()
                self._work_done = None

    def begin(self, work: object) -> None:
        """Make ``work`` (a Turn) the session's current foreground work (it owns the slot)."""
        self._current = work

    def is_current(self, work: object) -> bool:
        """True while ``work`` is the session's current foreground work: a task the handler
        leaked past its idle must not make an idle session look busy."""
        return self._current is work

    def release(self) -> None:
        """End the current foreground work and hand the slot to the next held prompt."""
        self._scope = None
        self._current = None
        self._wake(self._queue.release())

    async def run_work(
        self, body: Callable[[], Awaitable[str | None]]
    ) -> tuple[str, BaseException | None]:
        """Run foreground work in a cancel scope; return (stop reason, failure or None).

        Cancellation requested through :meth:`cancel` yields ``"cancelled"``; a failure
        raised after cancel was requested also counts as cancelled (PL-19). A return value
        that is not a non-empty string (or None, meaning ``end_turn``) is a failure.
        """
        with _aio.cancel_scope() as scope:
            self._scope = scope
            if self._queue.cancel_requested:
                scope.cancel()
            try:
                reason = await body()
            except anyio.get_cancelled_exc_class():
                if not self._queue.cancel_requested:
                    raise
                reason = CANCELLED
            except Exception as exc:
                if self._queue.cancel_requested:
                    return CANCELLED, None
                return ERROR, exc
        if self._queue.cancel_requested:
            return CANCELLED, None
        if reason is None:
            return END_TURN, None
        if not isinstance(reason, str) or not reason:
            return ERROR, TypeError(f"the handler returned {reason!r}, not a stop reason")
        return reason, None

    def cancel(self) -> bool:
        """Cancel running foreground work and withdraw held prompts. Harmless when idle.

        Prompts not yet inserted -- held ones, and one the slot was just handed to -- are
        answered ``-32800`` (PL-18). Returns True if foreground work was running.
        """
        return self._cancelled(*self._queue.cancel())

    def _cancelled(self, running: bool, withdrawn: list[Ticket]) -> bool:
        for ticket in withdrawn:
            self._waiters[ticket].set()
        if running and self._scope is not None:
            self._scope.cancel()
        return running

    @property
    def cancel_requested(self) -> bool:
        """True once session/cancel has been received for the running work."""
        return self._queue.cancel_requested

    async def wait_idle(self) -> None:
        """Wait until no foreground work is running (used by session/close)."""
        if self._busy:
            if self._work_done is None:
                self._work_done = anyio.Event()
            await self._work_done.wait()

    def begin_close(self) -> bool:
        """Refuse new prompts and work, and cancel what runs (SS-22); see :meth:`cancel`."""
        return self._cancelled(*self._queue.close())

    def mark_closed(self) -> None:
        """Stop sending anything for this session (SS-22)."""
        if self._queue.state != "free":
            raise LocalProtocolError("close the session only after its work has ended")
        self._queue.closing = True
        self.closed = True
        self.emitter.closed = True
        if self._mcp is not None:
            self._mcp.stop()

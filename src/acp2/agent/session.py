"""One live session on the agent side: its prompt queue, foreground state and cancellation.

Prompt ordering is decided here. A prompt that arrives while foreground work is running is
*held*: its ``session/prompt`` request stays pending (Nov PL-22) until the running work has
ended with its idle, then it is inserted and answered, and it starts its own foreground
work. Two prompts never interleave their lifecycles, and each piece of foreground work ends
with exactly one idle carrying a stop reason. ``session/cancel`` withdraws held prompts
(answered ``-32800``) and cancels the running work, which then ends idle ``cancelled``.
"""

from __future__ import annotations

import secrets
from collections import deque
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import anyio

from acp2.agent.emitter import Emitter
from acp2.errors import LocalProtocolError, RequestCancelled
from acp2.lifecycle import ForegroundMachine
from acp2.schema import StateUpdate

if TYPE_CHECKING:
    from acp2.agent.server import AgentServer
    from acp2.agent.turn import Turn

__all__ = ["AgentSession"]


class _Held:
    """A prompt waiting for the slot: ``granted`` once the slot was handed to it,
    ``withdrawn`` once session/cancel or session/close took it back."""

    __slots__ = ("event", "granted", "withdrawn")

    def __init__(self) -> None:
        self.event = anyio.Event()
        self.granted = False
        self.withdrawn = False


class AgentSession:
    """A session the agent serves on one connection.

    Attributes the prompt handler may read: ``id``, ``cwd``, ``additional_directories``,
    ``mcp_servers`` (as sent by the client), ``data`` (a dict for the author's own state,
    kept for the life of the process: a resume, even on another connection, gets the same
    dict; not stored on disk) and ``state`` (``idle`` / ``running`` / ``requires_action``).
    """

    def __init__(
        self,
        session_id: str,
        cwd: str,
        additional_directories: list[str],
        mcp_servers: list[Any],
        emitter: Emitter,
    ) -> None:
        self.id = session_id
        self.cwd = cwd
        self.additional_directories = additional_directories
        self.mcp_servers = mcp_servers
        self.data: dict[str, Any] = {}
        self.server: AgentServer | None = None
        self.emitter = emitter
        self.machine = ForegroundMachine()
        self.turn: Turn | None = None
        self.closed = False
        self._closing = False
        self._busy = False
        self._held: deque[_Held] = deque()
        self._handoff: _Held | None = None
        self._scope: anyio.CancelScope | None = None
        self._cancel_requested = False
        self._work_done = anyio.Event()
        self._work_done.set()

    @property
    def state(self) -> str:
        """The foreground state last reported: ``idle``, ``running`` or ``requires_action``."""
        return self.machine.state

    @property
    def roots(self) -> list[str]:
        """The session's root set: ``cwd`` followed by the additional directories (SS-04)."""
        return [self.cwd, *self.additional_directories]

    def new_message_id(self, kind: str) -> str:
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
        if self.server is None:
            raise LocalProtocolError("the session is not attached to a connection")
        await self.server.start_work(self, handler)

    # -- foreground state ---------------------------------------------------------

    def report(self, event: str, **fields: Any) -> None:
        """Apply a lifecycle event (start / block / unblock / stop) and send the state.

        Raises LocalProtocolError (sending nothing) on a transition the lifecycle forbids.
        """
        before = self.machine.state
        after = self.machine.apply(event)
        if after != before or event == "stop":
            self.emitter.emit(StateUpdate(state=after, **fields))

    # -- prompt slots -------------------------------------------------------------

    async def acquire(self) -> None:
        """Wait until this prompt may be inserted (FIFO). Raises RequestCancelled if withdrawn.

        When it returns, the caller owns the slot and must end with :meth:`release`.
        """
        if self.closed or self._closing:
            raise RequestCancelled("The session is closed")
        if not self._busy and not self._held:
            self._busy = True
            self._work_done = anyio.Event()
            return
        held = _Held()
        self._held.append(held)
        try:
            await held.event.wait()
        except BaseException:
            # Cancelled ($/cancel_request, shutdown) while held -- or just after the slot
            # was handed to us: then pass it on, or the session would stay busy forever.
            if held.granted:
                self._take_handoff(held)
                self.release()
            elif held in self._held:
                self._held.remove(held)
            raise
        if held.granted:
            self._take_handoff(held)
        if held.withdrawn:
            if held.granted:
                self.release()
            raise RequestCancelled("The prompt was withdrawn by session/cancel")

    def _take_handoff(self, held: _Held) -> None:
        if self._handoff is held:
            self._handoff = None

    def release(self) -> None:
        """End the current foreground work and hand the slot to the next held prompt."""
        self._scope = None
        self._cancel_requested = False
        self.turn = None
        if self._held:
            held = self._held.popleft()
            held.granted = True
            self._handoff = held
            held.event.set()
            return
        self._busy = False
        self._work_done.set()

    async def run_work(
        self, body: Callable[[], Awaitable[str | None]]
    ) -> tuple[str, BaseException | None]:
        """Run foreground work in a cancel scope; return (stop reason, failure or None).

        Cancellation requested through :meth:`cancel` yields ``"cancelled"``; a failure
        raised after cancel was requested also counts as cancelled (PL-19). A return value
        that is not a non-empty string (or None, meaning ``end_turn``) is a failure.
        """
        with anyio.CancelScope() as scope:
            self._scope = scope
            if self._cancel_requested:
                scope.cancel()
            try:
                reason = await body()
            except anyio.get_cancelled_exc_class():
                if not self._cancel_requested:
                    raise
                reason = "cancelled"
            except Exception as exc:
                if self._cancel_requested:
                    return "cancelled", None
                return "error", exc
        if self._cancel_requested:
            return "cancelled", None
        if reason is None:
            return "end_turn", None
        if not isinstance(reason, str) or not reason:
            return "error", TypeError(f"the handler returned {reason!r}, not a stop reason")
        return reason, None

    def cancel(self) -> bool:
        """Cancel running foreground work and withdraw held prompts. Harmless when idle.

        Prompts not yet inserted -- held ones, and one the slot was just handed to -- are
        answered ``-32800`` (PL-18). Returns True if foreground work was running.
        """
        while self._held:
            held = self._held.popleft()
            held.withdrawn = True
            held.event.set()
        if self._handoff is not None:
            # Its work has not started: withdrawing the prompt is the whole cancellation.
            self._handoff.withdrawn = True
            self._handoff = None
            return False
        if not self._busy:
            return False
        self._cancel_requested = True
        if self._scope is not None:
            self._scope.cancel()
        return True

    @property
    def cancel_requested(self) -> bool:
        """True once session/cancel has been received for the running work."""
        return self._cancel_requested

    async def wait_idle(self) -> None:
        """Wait until no foreground work is running (used by session/close)."""
        await self._work_done.wait()

    def begin_close(self) -> bool:
        """Refuse new prompts and work, and cancel what runs (SS-22); see :meth:`cancel`."""
        self._closing = True
        return self.cancel()

    def mark_closed(self) -> None:
        """Stop sending anything for this session (SS-22)."""
        if self._busy:
            raise LocalProtocolError("close the session only after its work has ended")
        self.closed = True
        self.emitter.closed = True

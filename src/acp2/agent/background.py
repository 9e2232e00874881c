"""Background work on the agent side: tool calls and terminals that outlive their turn.

RFD "v2 Background Work" (Nov / Preview; D-13, PL-25, TC-13, TM-10). A handle
(:class:`~acp2.agent.ToolCallHandle`, :class:`~acp2.agent.TerminalHandle`) can be
*detached*: it is listed in the ``background`` of every later ``state_update`` of its
session until it reaches a final status (a tool call) or reports its exit (a terminal).
A handle may advertise ``capabilities.cancel``; the client's ``tool_call/cancel`` /
``terminal/cancel`` then reaches it as a *cancel request* (:class:`Cancellable`), which
the handle's owner sees as a flag, an awaitable and callbacks.

The rules this module keeps: an item is announced (its own update) before the first
snapshot listing it, and its final update goes out before the snapshot that drops it;
once a session reported ``background`` every state update carries it (``[]`` when none);
``session/close`` stops the session's background work and connection end cancels it.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any, Final, Literal, Protocol

import anyio
from msgspec import UNSET, UnsetType

from acp2.errors import InvalidParams, LocalProtocolError
from acp2.schema import BackgroundTerminal, BackgroundToolCall

__all__ = [
    "CLOSE_GRACE",
    "BackgroundBody",
    "BackgroundOwner",
    "Cancellable",
    "ItemKind",
    "SessionBackground",
    "Spawner",
]

log = logging.getLogger("acp2.agent")

#: ``tool_call`` or ``terminal``: the two kinds of entity a client can cancel.
ItemKind = Literal["tool_call", "terminal"]
#: Starts a coroutine function in a task that outlives the turn (a task group's).
Spawner = Callable[..., object]
#: The body of detached work: gets the handle, runs until the work is done.
BackgroundBody = Callable[[Any], Awaitable[None]]
#: How long ``session/close`` waits for cancelled background bodies to end (seconds).
CLOSE_GRACE: Final = 5.0


class BackgroundOwner(Protocol):
    """What a handle needs of its session (an :class:`~acp2.agent.session.AgentSession`)."""

    @property
    def background(self) -> SessionBackground:
        """The session's background work on its connection."""


class Cancellable:
    """The background and cancel side of a handle (a base of both handle classes).

    What the owner of a handle may rely on: :attr:`cancel_requested` turns True once the
    client asked to cancel it (``tool_call/cancel`` / ``terminal/cancel``, only possible
    while ``cancel`` is advertised), :meth:`wait_cancel_requested` returns then, and each
    :meth:`on_cancel_request` callback is called once, then. The request is not the end
    of the item: the owner confirms it with a final status (the runtime does it for a
    detached body, see :meth:`detach`).
    """

    kind: ItemKind
    _session: BackgroundOwner | None

    def _init_cancellable(self, session: BackgroundOwner | None) -> None:
        self._session = session
        self.detached = False
        self.cancel_advertised = False
        self._requested = False
        self._request_event: anyio.Event | None = None
        self._callbacks: list[Callable[[], None]] = []
        self._scope: anyio.CancelScope | None = None
        self._body_done: anyio.Event | None = None

    @property
    def item_id(self) -> str:
        """The tool call id or terminal id."""
        raise NotImplementedError

    @property
    def finished(self) -> bool:
        """True once the item reached its final status (or exit)."""
        raise NotImplementedError

    async def _announce_cancel(self, advertised: bool) -> None:
        raise NotImplementedError

    async def _finalize(self, *, failed: bool) -> None:
        raise NotImplementedError

    def listing(self) -> BackgroundTerminal | BackgroundToolCall:
        """The item as a ``background`` entry."""
        raise NotImplementedError

    # -- the owner's view of a cancel request -------------------------------------------

    @property
    def cancel_requested(self) -> bool:
        """True once the client asked to cancel this item."""
        return self._requested

    async def wait_cancel_requested(self) -> None:
        """Return once the client asked to cancel this item (at once if it has)."""
        if self._requested:
            return
        if self._request_event is None:
            self._request_event = anyio.Event()
        await self._request_event.wait()

    def on_cancel_request(self, callback: Callable[[], None]) -> None:
        """Call ``callback()`` once when the client asks to cancel this item (at once if
        it has already). Exceptions are logged, never raised into the runtime."""
        if self._requested:
            _call(callback)
        else:
            self._callbacks.append(callback)

    # -- advertising and detaching ---------------------------------------------------------

    async def allow_cancel(self) -> None:
        """Advertise ``capabilities.cancel`` (an update) so the client may cancel this
        item; see :attr:`cancel_requested`. Raises ``LocalProtocolError`` once finished
        or when the handle belongs to no session."""
        self._check_usable("allow_cancel()")
        if not self.cancel_advertised:
            assert self._session is not None  # _check_usable
            self._session.background.register(self)
            self.cancel_advertised = True
            await self._announce_cancel(True)

    async def detach(self, body: BackgroundBody | None = None, *, cancellable: bool = True) -> None:
        """Move this item to the background: it outlives the turn that started it and is
        listed in every later ``state_update`` of the session until it ends.

        With ``cancellable`` (the default) ``capabilities.cancel`` is advertised first.
        ``body(handle)``, when given, runs in its own task on the session's connection:
        a cancel request cancels it, and when it ends the runtime ends the item unless the
        body did (a tool call ``completed``, or ``cancelled`` after a cancel request, or
        ``failed`` if the body raised; a terminal reports an exit without a code). Without
        a body, the caller keeps working on the handle and must end it itself.
        Raises ``LocalProtocolError`` when the item is finished or already detached.
        """
        self._check_usable("detach()")
        if self.detached:
            raise LocalProtocolError(f"{self.kind} {self.item_id} is already detached")
        session = self._session
        assert session is not None  # _check_usable
        if cancellable:
            await self.allow_cancel()
        self.detached = True
        session.background.add(self)
        if body is not None:
            self._body_done = anyio.Event()
            session.background.spawn(self._run_body, body)

    def _check_usable(self, what: str) -> None:
        if self._session is None:
            raise LocalProtocolError(f"{what}: this handle belongs to no session")
        if self.finished:
            raise LocalProtocolError(f"{what}: {self.kind} {self.item_id} has already ended")

    async def _run_body(self, body: BackgroundBody) -> None:
        """Run a detached body; end the item after it unless the body did."""
        failed = False
        try:
            with anyio.CancelScope() as scope:
                self._scope = scope
                if self._requested:
                    scope.cancel()
                try:
                    await body(self)
                except Exception:
                    log.exception("background %s %s failed", self.kind, self.item_id)
                    failed = True
            if not self.finished:
                await self._finalize(failed=failed)
        finally:
            self._scope = None
            if self._body_done is not None:
                self._body_done.set()

    # -- the runtime's side ----------------------------------------------------------------

    def request_cancel(self) -> None:
        """Internal: the client asked to cancel this item; tell its owner (once)."""
        if self._requested:
            return
        self._requested = True
        if self._request_event is not None:
            self._request_event.set()
        callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            _call(callback)
        if self._scope is not None:
            self._scope.cancel()

    async def wait_body(self) -> None:
        """Internal: return once the detached body (if any) has ended."""
        if self._body_done is not None:
            await self._body_done.wait()

    async def end_cancelled(self) -> None:
        """Internal (``session/close``): end the item after a cancel request."""
        await self._finalize(failed=False)

    def _ended(self) -> None:
        """Internal: the item sent its final update; it leaves the background."""
        if self._session is not None:
            self._session.background.discard(self)

    def _final_capabilities(self) -> bool:
        """Whether the final update must withdraw ``cancel`` (it was advertised)."""
        if self.cancel_advertised:
            self.cancel_advertised = False
            return True
        return False


def _call(callback: Callable[[], None]) -> None:
    try:
        callback()
    except Exception:
        log.exception("a cancel-request callback failed")


class SessionBackground:
    """The background work and cancellable items of one session on one connection.

    ``spawn`` starts detached bodies (the connection's task group); ``changed`` is called
    when the listing changed (the session sends a snapshot). ``reported`` is True once the
    session's state updates carry ``background`` (kept by the caller across connections).
    """

    __slots__ = ("_changed", "_known", "_listed", "_spawn", "reported")

    def __init__(self, spawn: Spawner | None, changed: Callable[[], None]) -> None:
        self._spawn = spawn
        self._changed = changed
        self.reported = False
        # Made on first use: most sessions never list or register an item (128 bytes each).
        self._listed: dict[tuple[str, str], Cancellable] | None = None
        self._known: dict[tuple[str, str], Cancellable] | None = None

    def register(self, handle: Cancellable) -> None:
        """Know ``handle`` so a cancel request can find it (it advertises ``cancel``)."""
        if self._known is None:
            self._known = {}
        self._known[(handle.kind, handle.item_id)] = handle

    def listing(self) -> list[BackgroundTerminal | BackgroundToolCall] | UnsetType:
        """The ``background`` field of a state update: the listed items in the order they
        were detached, or ``UNSET`` while the session never reported any."""
        if not self.reported:
            return UNSET
        return [handle.listing() for handle in self.items()]

    def items(self) -> list[Cancellable]:
        """The handles listed now, in the order they were detached."""
        return [] if self._listed is None else list(self._listed.values())

    def add(self, handle: Cancellable) -> None:
        """List ``handle`` (already announced) and send a snapshot."""
        self.register(handle)
        if self._listed is None:
            self._listed = {}
        self._listed[(handle.kind, handle.item_id)] = handle
        self.reported = True
        self._changed()

    def discard(self, handle: Cancellable) -> None:
        """Forget ``handle`` (its final update is out); send a snapshot if it was listed."""
        key = (handle.kind, handle.item_id)
        if self._known is not None:
            self._known.pop(key, None)
        if self._listed is not None and self._listed.pop(key, None) is not None:
            self._changed()

    def spawn(self, body: Callable[..., Awaitable[None]], *args: Any) -> None:
        """Start ``body(*args)`` in a task that outlives the turn."""
        if self._spawn is None:
            raise LocalProtocolError("detach(body): the session has no connection to run it")
        self._spawn(body, *args)

    def request_cancel(self, kind: ItemKind, item_id: str) -> Cancellable:
        """Serve ``tool_call/cancel`` / ``terminal/cancel``: tell the item's owner.

        Raises ``InvalidParams`` (-32602) for an unknown, already final or not cancellable
        item (TC-13, TM-10). Cancelling one item never changes the foreground state.
        """
        handle = None if self._known is None else self._known.get((kind, item_id))
        if handle is None or handle.finished:
            raise InvalidParams(f"Unknown or finished {kind}: {item_id}")
        if not handle.cancel_advertised:
            raise InvalidParams(f"The {kind} {item_id} does not advertise cancel")
        handle.request_cancel()
        return handle

    def abandon(self) -> None:
        """Connection end: tell every owner its item is cancelled (nothing can be sent)."""
        for handle in list((self._known or {}).values()):
            handle.request_cancel()

    async def stop(self) -> None:
        """``session/close``: cancel every listed item, give detached bodies
        :data:`CLOSE_GRACE` to end, then end whatever is still listed (``cancelled``)."""
        listed = self.items()
        for handle in listed:
            handle.request_cancel()
        with anyio.move_on_after(CLOSE_GRACE):
            for handle in listed:
                await handle.wait_body()
        for handle in self.items():
            await handle.end_cancelled()

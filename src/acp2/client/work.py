"""A :class:`Work`: the foreground work one accepted prompt started, up to its ``idle``.

The ``session/prompt`` response only says the prompt was accepted (PL-03, PL-05); the
work ends with the first ``state_update`` ``idle`` that follows. Updates may arrive
before the response (Nov: the user message may precede it, D-09; a held prompt's
response waits for the previous work's idle, PL-22), so a work records from the moment
its prompt is sent and, on acceptance, keeps only what belongs to it: everything after
the last ``idle`` that precedes its user message (or, without a ``messageId``, after the
last ``idle`` seen so far).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from msgspec import UNSET

from acp2.schema import AgentMessage, AgentMessageChunk, StateUpdate, UserMessage, UserMessageChunk
from acp2.state import SessionState

if TYPE_CHECKING:
    from acp2.client.session import ClientSession

__all__ = ["Work"]


def _is_idle(update: Any) -> bool:
    return type(update) is StateUpdate and update.state == "idle"


def _user_message_id(update: Any) -> str | None:
    if isinstance(update, UserMessage | UserMessageChunk):
        return update.message_id
    return None


class Work:
    """The updates of one accepted prompt's work, until ``idle``.

    ``async for update in work`` yields every ``session/update`` payload of the work in
    arrival order (typed models; unknown kinds as ``msgspec.Raw``), the final ``idle``
    ``state_update`` included, then stops; it may be iterated again from the start.
    :meth:`wait` returns the stop reason. Both raise :class:`~acp2.errors.ConnectionClosed`
    (with the agent's stderr tail) if the agent goes away first; bound them with
    ``anyio.fail_after`` or ``wait(timeout=...)``.
    """

    def __init__(self, session: ClientSession) -> None:
        self.session = session
        self._message_id: str | None = None
        self.accepted = False
        #: True once the work's ``idle`` arrived.
        self.done = False
        #: The ``stopReason`` of the final ``idle`` (None if the agent reported none).
        self.stop_reason: str | None = None
        #: The ``error`` object of a Nov ``idle``/``error`` (else None).
        self.error: Any = None
        self._items: list[Any] = []
        self._failure: BaseException | None = None

    # -- read side -----------------------------------------------------------------------

    @property
    def message_id(self) -> str | None:
        """The user message's ``messageId``: from the prompt response (Nov), else from the
        first user-message update of this work (Aug, D-09); None until known."""
        if self._message_id is None:
            for update in self._items:
                found = _user_message_id(update)
                if found is not None:
                    return found
        return self._message_id

    @property
    def state(self) -> SessionState:
        """The session's reduced state (shared, live)."""
        return self.session.state

    @property
    def updates(self) -> list[Any]:
        """The updates received for this work so far (a copy)."""
        return list(self._items)

    @property
    def text(self) -> str:
        """The current text of the agent messages this work touched, in first-seen order,
        separated by blank lines (thoughts excluded)."""
        ids: dict[str, None] = {}
        for update in self._items:
            if isinstance(update, AgentMessageChunk | AgentMessage):
                ids.setdefault(update.message_id, None)
        messages = self.session.state.messages
        parts = [messages[("agent", mid)].text for mid in ids if ("agent", mid) in messages]
        return "\n\n".join(part for part in parts if part)

    def __aiter__(self) -> AsyncIterator[Any]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[Any]:
        index = 0
        while True:
            while index < len(self._items):
                yield self._items[index]
                index += 1
            if self.done:
                return
            await self._changed()

    async def wait(self) -> str | None:
        """Wait for the work's ``idle`` and return its stop reason (None: not reported).

        Raises ``ConnectionClosed`` if the agent goes away first. Bound it with
        ``anyio.fail_after``; a timeout leaves the work running (cancel it with
        :meth:`ClientSession.cancel`).
        """
        while not self.done:
            await self._changed()
        return self.stop_reason

    async def cancel(self) -> str | None:
        """Cancel the session's foreground work (see :meth:`ClientSession.cancel`) and
        return this work's stop reason (``cancelled`` unless it ended first)."""
        await self.session.cancel()
        return await self.wait()

    async def _changed(self) -> None:
        if self._failure is not None:
            raise self._failure
        await self.session._wait_change()

    # -- write side (called by the session) -----------------------------------------------

    def _push(self, update: Any) -> bool:
        """Record one update; return True when it ended the work."""
        if self.done:
            return False
        self._items.append(update)
        if self.accepted and type(update) is StateUpdate and update.state == "idle":
            self._finish(update)
            return True
        return False

    def _accept(self, message_id: str | None) -> None:
        """Mark accepted; drop updates that belong to earlier work (see module doc)."""
        self.accepted = True
        self._message_id = message_id
        items = self._items
        anchor = len(items)
        if message_id is not None:
            anchor = next(
                (i for i, u in enumerate(items) if _user_message_id(u) == message_id), anchor
            )
        start = 0
        for i in range(anchor):
            if _is_idle(items[i]):
                start = i + 1
        del items[:start]
        for i in range(anchor - start, len(items)):
            if _is_idle(items[i]):
                del items[i + 1 :]
                self._finish(items[i])
                break

    def _finish(self, idle: StateUpdate) -> None:
        self.done = True
        reason = idle.stop_reason
        self.stop_reason = reason if isinstance(reason, str) else None
        self.error = None if idle.error is UNSET else idle.error

    def _fail(self, exc: BaseException) -> None:
        if not self.done:
            self._failure = exc

"""A :class:`Work`: the foreground work one accepted prompt started, up to its ``idle``.

The ``session/prompt`` response only says the prompt was accepted (PL-03, PL-05); the
work ends with the first ``state_update`` ``idle`` that follows. Updates may arrive
before the response (Nov: the user message may precede it, D-09; a held prompt's
response waits for the previous work's idle, PL-22), so a work records from the moment
its prompt is sent and, on acceptance, keeps only what belongs to it: everything after
the last ``idle`` that precedes its user message (or, without one, after the last
``idle`` before the response). The session accepts every prompt answered before an
``idle`` in the call that delivers the idle (:meth:`ClientSession._take_answers`), so
"before the response" is the order on the wire, even when the agent writes the
response and its whole turn in one burst.
An agent that runs a whole foreground work (idle, ``running``, ..., ``idle``) after the
prompt was sent and only then answers, without a user message, has that work taken as
the prompt's: the work never waits on a session that already went idle for it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from msgspec import UNSET

from acp2.client._coalesce import Run, TextRun, new_run
from acp2.schema import (
    AgentMessage,
    AgentMessageChunk,
    StateUpdate,
    TextContent,
    UserMessage,
    UserMessageChunk,
)
from acp2.state import SessionState

if TYPE_CHECKING:
    from acp2.client.session import ClientSession

__all__ = ["MAX_ENTRIES", "Skipped", "Work"]

#: How many entries (updates or merged runs) a work keeps; past it the oldest half
#: give way to one :class:`Skipped` marker.
MAX_ENTRIES: Final = 4096

_NOTHING: Final = object()


def _is_idle(update: Any) -> bool:
    return type(update) is StateUpdate and update.state == "idle"


def _after_last_idle(items: list[Any], end: int) -> int:
    """The index after the last ``idle`` in ``items[:end]`` (0 if there is none)."""
    for i in range(end - 1, -1, -1):
        if _is_idle(items[i]):
            return i + 1
    return 0


# Exact types, looked up in a set: the decoder makes no subclasses (the reducer, too,
# dispatches on the exact type), and a set lookup is a few times cheaper than an
# ``isinstance`` against a union, once per update of every work.
_USER_KINDS: Final = frozenset({UserMessage, UserMessageChunk})
_AGENT_KINDS: Final = frozenset({AgentMessage, AgentMessageChunk})


def _user_message_id(entry: Any) -> str | None:
    kind = type(entry)
    if kind in _USER_KINDS:
        return entry.message_id  # type: ignore[no-any-return]
    if kind is TextRun and entry.kind is UserMessageChunk:
        return str(entry.message_id)
    return None


def _agent_message_id(entry: Any) -> str | None:
    kind = type(entry)
    if kind in _AGENT_KINDS:
        return entry.message_id  # type: ignore[no-any-return]
    if kind is TextRun and entry.kind is AgentMessageChunk:
        return str(entry.message_id)
    return None


@dataclass(frozen=True, slots=True)
class Skipped:
    """Yielded by a :class:`Work` in place of entries it no longer keeps.

    A work keeps at most :data:`MAX_ENTRIES` entries (an entry is one update, or several
    coalesced ones); when a peer sends more in a way that does not coalesce, the oldest
    half is dropped and an iterator that had not read them gets this marker next.
    ``count`` is how many entries the work has dropped so far. Every dropped update was
    reduced: read ``work.state`` (the source of truth) instead of the deltas you missed.
    """

    count: int


class Work:
    """The updates of one accepted prompt's work, until ``idle``.

    ``async for update in work`` yields the work's ``session/update`` payloads in arrival
    order (typed models; unknown kinds as ``msgspec.Raw``), the final ``idle``
    ``state_update`` included, then stops; it may be iterated again from the start.
    :meth:`wait` returns the stop reason. Both raise :class:`~acp2.errors.ConnectionClosed`
    (with the agent's stderr tail) if the agent goes away first; bound them with
    ``anyio.fail_after``.

    Updates are **coalesced**: consecutive plain text chunks of one message (and
    consecutive output chunks of one terminal) may arrive as one merged chunk, and
    consecutive ``tool_call_update`` patches of one tool call that no iterator took yet as
    one merged patch (never across a ``status``: each status change is its own update).
    An iterator that keeps up gets the agent's update objects one by one; a slow one gets
    fewer, bigger updates with the same effect. Past :data:`MAX_ENTRIES` kept entries the
    oldest give way to a :class:`Skipped` marker.
    The session's :attr:`state` always holds everything.
    """

    def __init__(self, session: ClientSession, wait_change: Callable[[], Awaitable[None]]) -> None:
        self.session = session
        #: Waits for the session's next update; raises once the session failed (the one
        #: place a failure is kept, so a work has none of its own).
        self._wait_change = wait_change
        #: Foreground work was running when the prompt was sent.
        self._busy_at_send = session.state.busy
        self._message_id: str | None = None
        #: The ``idempotencyKey`` the prompt was sent with: resend the prompt with it to
        #: retry without a second insertion (see :meth:`ClientSession.prompt`).
        self.idempotency_key: str | None = None
        self.accepted = False
        #: True once the work's ``idle`` arrived.
        self.done = False
        #: The ``stopReason`` of the final ``idle`` (None if the agent reported none).
        self.stop_reason: str | None = None
        #: The ``error`` object of a Nov ``idle``/``error`` (else None).
        self.error: Any = None
        #: The log: updates and merged runs; ``_base`` entries were dropped before it.
        self._items: list[Any] = []
        self._base = 0
        self._dropped = 0
        #: The last entry when it is a run that may still grow.
        self._run: Run | None = None
        #: Agent message ids this work touched, in first-seen order (for :attr:`text`).
        self._agent_ids: dict[str, None] = {}

    # -- read side -----------------------------------------------------------------------

    @property
    def message_id(self) -> str | None:
        """The user message's ``messageId``: from the prompt response (Nov), else from the
        first user-message update of this work (Aug, D-09); None until known."""
        if self._message_id is None:
            for entry in self._items:
                found = _user_message_id(entry)
                if found is not None:
                    return found
        return self._message_id

    @property
    def state(self) -> SessionState:
        """The session's reduced state (shared, live)."""
        return self.session.state

    @property
    def updates(self) -> list[Any]:
        """The work's updates so far, coalesced as described above (a new list)."""
        return [entry.whole() if isinstance(entry, Run) else entry for entry in self._items]

    @property
    def text(self) -> str:
        """The current text of the agent messages this work touched, in first-seen order,
        separated by blank lines (thoughts excluded)."""
        messages = self.session.state.messages
        ids = self._agent_ids
        parts = [messages[("agent", mid)].text for mid in ids if ("agent", mid) in messages]
        return "\n\n".join(part for part in parts if part)

    def __aiter__(self) -> AsyncIterator[Any]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[Any]:
        cursor = [0, 0]  # absolute entry index, offset read in that entry (runs)
        while True:
            item = self._next(cursor)
            if item is not _NOTHING:
                yield item
            elif self.done:
                return
            else:
                await self._wait_change()

    def _next(self, cursor: list[int]) -> Any:
        """The next item for the iterator at ``cursor`` (advanced), or _NOTHING for now."""
        base, items = self._base, self._items
        if cursor[0] < base:  # what it had not read was dropped: the marker is next
            cursor[0], cursor[1] = base, 0
        while (index := cursor[0] - base) < len(items):
            entry = items[index]
            if not isinstance(entry, Run):
                cursor[0] += 1
                cursor[1] = 0
                return entry
            offset, size = cursor[1], entry.size
            last = index == len(items) - 1
            if offset < size:
                item = entry.since(offset)
                cursor[0], cursor[1] = (cursor[0], size) if last else (cursor[0] + 1, 0)
                return item
            if last:
                return _NOTHING
            cursor[0] += 1
            cursor[1] = 0
        return _NOTHING

    async def wait(self) -> str | None:
        """Wait for the work's ``idle`` and return its stop reason (None: not reported).

        Raises ``ConnectionClosed`` if the agent goes away first. Bound it with
        ``anyio.fail_after``; a timeout leaves the work running (cancel it with
        :meth:`ClientSession.cancel`).
        """
        while not self.done:
            await self._wait_change()
        return self.stop_reason

    async def cancel(self) -> str | None:
        """Cancel the session's foreground work (see :meth:`ClientSession.cancel`) and
        return this work's stop reason (``cancelled`` unless it ended first)."""
        await self.session.cancel()
        return await self.wait()

    # -- write side: fed by the session (internal, not API) ---------------------------------

    def record(self, update: Any) -> bool:
        """Internal: record one update of the session; return True when it ended the work."""
        if self.done:
            return False
        kind = type(update)
        if kind is StateUpdate:  # no run, no message id: the updates of every turn
            return self.record_state(update)
        run = self._run
        if run is not None and kind is run.kind:
            if type(run) is TextRun:  # run.extend(update), inlined: the hot path of a stream
                block = update.content
                if (
                    update.message_id == run.message_id
                    and update.meta is UNSET
                    and type(block) is TextContent
                    and block.annotations is UNSET
                    and block.meta is UNSET
                ):
                    try:
                        run.data += block.text.encode()
                    except UnicodeEncodeError:
                        run.data += block.text.encode("utf-8", "surrogatepass")
                    run.last = update
                    return False
            elif run.extend(update):
                return False
        self._run = run = new_run(update)
        self._append(update if run is None else run)
        return False

    def record_state(self, update: StateUpdate) -> bool:
        """Internal: :meth:`record` for a ``state_update``: it ends any run, and an
        ``idle`` the work once accepted (then True)."""
        if self.done:
            return False
        self._run = None
        items = self._items
        items.append(update)
        if len(items) > MAX_ENTRIES:
            self._drop_oldest()
        if self.accepted and update.state == "idle":
            self._finish(update)
            return True
        return False

    def record_text(self, update: Any) -> None:
        """Internal: :meth:`record` for an agent chunk the state found plain (the hot path)."""
        if self.done:
            return
        run = self._run
        if (
            type(run) is TextRun
            and run.kind is AgentMessageChunk
            and update.message_id == run.message_id
            and update.meta is UNSET
        ):
            try:
                run.data += update.content.text.encode()
            except UnicodeEncodeError:
                run.data += update.content.text.encode("utf-8", "surrogatepass")
            run.last = update
            return
        self.record(update)

    def _append(self, entry: Any) -> None:
        items = self._items
        items.append(entry)
        mid = _agent_message_id(entry)
        if mid is not None:
            self._agent_ids.setdefault(mid, None)
        if len(items) > MAX_ENTRIES:
            self._drop_oldest()

    def _drop_oldest(self) -> None:
        """Replace the oldest half of the entries by one :class:`Skipped` marker."""
        items = self._items
        cut = len(items) - MAX_ENTRIES // 2
        first = items[0]
        self._dropped += cut - 1 if type(first) is Skipped else cut
        items[:cut] = [Skipped(self._dropped)]
        self._base += cut - 1

    def accept(self, message_id: str | None) -> None:
        """Internal: the prompt's response arrived (with the user message's ``messageId``,
        if any); drop the updates that belong to earlier work (see the module doc)."""
        self.accepted = True
        self._message_id = message_id
        items = self._items
        size = len(items)
        anchor = self._anchor(message_id)
        start = _after_last_idle(items, anchor) if anchor else 0
        if start == anchor == size:  # no user message, nothing since the last idle
            start = anchor = self._turn_before_answer(start)
        if start:
            del items[:start]
            self._base += start
        for i in range(anchor - start, len(items)):
            if _is_idle(items[i]):
                del items[i + 1 :]
                self._finish(items[i])
                break
        if self._run is not None and (not items or items[-1] is not self._run):
            self._run = None
        if len(items) != size or self._dropped:  # else the ids seen so far are all kept
            ids = (_agent_message_id(entry) for entry in items)
            self._agent_ids = {mid: None for mid in ids if mid is not None}

    def _anchor(self, message_id: str | None) -> int:
        """The index of the first entry of the user message ``message_id`` (else the end)."""
        items = self._items
        if message_id is None:
            return len(items)
        if items and _user_message_id(items[0]) == message_id:
            return 0  # the usual turn: the prompt's user message opens the log
        found = (i for i, u in enumerate(items) if _user_message_id(u) == message_id)
        return next(found, len(items))

    def _turn_before_answer(self, start: int) -> int:
        """Where this work starts when the agent ran a whole foreground work since the
        prompt was sent and only then answered it, without a user message: that work,
        from idle (or the send, if the session was idle then) through ``running`` to its
        ``idle``, is taken as the prompt's. Else ``start`` (wait for the next idle).

        A conforming agent answers first (PL-03) and reports the user message (PL-04);
        without this, such an agent left the work waiting on a session that had gone idle.
        A work that began with another prompt's user message is never taken: it is the
        turn this prompt was held behind, and this prompt's turn is still to come.
        """
        items = self._items
        end = start - 1  # the last idle; step back over repeated idle snapshots (PL-24)
        while end > 0 and _is_idle(items[end - 1]):
            end -= 1
        if end < 0:
            return start
        begin = _after_last_idle(items, end)
        if begin == 0 and self._busy_at_send:
            return start  # that work was already running when the prompt was sent
        turn = items[begin:end]
        mine = (None, self._message_id)
        if self._message_id is not None and any(_user_message_id(u) not in mine for u in turn):
            return start  # another prompt's turn: this one was held behind it (D-11)
        if any(type(u) is StateUpdate for u in turn):
            return begin
        return start

    def _finish(self, idle: StateUpdate) -> None:
        self.done = True
        self._run = None
        reason = idle.stop_reason
        self.stop_reason = reason if isinstance(reason, str) else None
        self.error = None if idle.error is UNSET else idle.error

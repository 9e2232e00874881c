"""How the back bridge's lifted v2 updates reach its client, in the agent's order.

:class:`UpdateSender` has two ways, chosen by the kind of client link:

- a v2 JSON-RPC connection (``acp2 bridge -- V1_AGENT``): each update becomes a
  ``session/update`` frame by concatenation, as the agent runtime's emitter builds it
  (the per-session head of :func:`acp2.rpc.update_frames.frame_head`, cached; one
  encode of the update, no notification object);
- acp2's own client in this process (a :class:`~acp2.bridge.inprocess.InProcessEnd`):
  every update is handed over as the object the lifter returned, never as bytes
  (nothing is encoded: the client encodes one only if a listener asks for its JSON) --
  to the client link's ``feed`` when it gave one (:meth:`UpdateSender.feed_to`: no
  notification object either), else to the local end's handler. The lifter returns
  new objects, or parts of the v1 update it read (never used again), so handing them
  over shares nothing anyone changes. What the client returns to await (an ``idle``
  it orders behind a prompt's answer) is awaited before the next update, as a
  connection's reader does.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Final

from anyio.abc import TaskGroup

import acp2.schema as v2
import acp2.schema.methods as v2m
from acp2.bridge.inprocess import InProcessEnd
from acp2.rpc.link import Link
from acp2.rpc.update_frames import frame_head
from acp2.schema.codec import encode

__all__ = ["UpdateSender"]

_METHOD: Final = v2m.SESSION_UPDATE.name


class UpdateSender:
    """Sends one bridge's lifted updates to ``client`` (see the module). ``agent`` is
    the v1 connection (a local link ends with it); ``task_group`` runs the waits of
    :meth:`send_soon`.

    ``send(session_id, updates)`` sends ``updates`` of ``session_id`` and returns an
    awaitable to await before sending on (only ever to a local client), or None;
    nothing is sent once the client is gone. It is bound once to the way of this
    client (an attribute: one call less per streamed update). ``pass_on(session_id,
    update)`` is ``send`` of one update (a stream's chunk) the lifter made from one the
    v1 connection's reader just read:
    sent even while that connection closes, as a connection's reader dispatches what it
    read (one check less)."""

    def __init__(self, agent: Link, client: Link, task_group: TaskGroup) -> None:
        self._agent = agent
        self._tg = task_group
        self._heads: dict[str, bytes] = {}
        self._feed: Callable[[str, Any], Awaitable[None] | None] | None = None
        self.send: Callable[[str, list[Any]], Awaitable[None] | None]
        self.pass_on: Callable[[str, Any], Awaitable[None] | None]
        if isinstance(client, InProcessEnd):
            self._local = client
            self.send, self.pass_on = self._hand_over, self._pass_on
        else:
            self._client = client
            self.send, self.pass_on = self._write, self._write_one

    def feed_to(self, feed: Callable[[str, Any], Awaitable[None] | None]) -> None:
        """Local client only: hand every update to ``feed(session_id, update)``
        (acp2's client's :meth:`acp2.client.core.ClientCore.feed`, what the local end's
        handler would do with them) instead of through the local end: no notification
        object per update. What it returns is awaited as the handler's return is."""
        self._feed = feed
        self.pass_on = feed  # no check, no layer in between: the hot path

    async def send_now(self, session_id: str, updates: list[Any]) -> None:
        """``send``, awaiting the backpressure it returns (for handlers that can)."""
        pending = self.send(session_id, updates)
        if pending is not None:
            await pending

    def send_soon(self, session_id: str, updates: list[Any]) -> None:
        """``send`` for callers that cannot await (the terminals' output)."""
        pending = self.send(session_id, updates)
        if pending is not None:
            self._tg.start_soon(_wait_for, pending)

    def forget(self, session_id: str) -> None:
        """Drop what is cached for a closed session."""
        self._heads.pop(session_id, None)

    def _head(self, session_id: str) -> bytes:
        head = self._heads.get(session_id)
        if head is None:
            head = self._heads[session_id] = frame_head(session_id)
        return head

    def _write(self, session_id: str, updates: list[Any]) -> None:
        client = self._client
        if client.closed:
            return
        head = self._head(session_id)
        for update in updates:
            client.send_frame_nowait(head + encode(update) + b"}}")

    def _write_one(self, session_id: str, update: Any) -> None:
        self._write(session_id, [update])

    def _pass_on(self, session_id: str, update: Any) -> Awaitable[None] | None:
        feed = self._feed
        if feed is not None:
            return feed(session_id, update)
        params = v2.UpdateSessionNotification(session_id=session_id, update=update)
        return self._local.deliver(_METHOD, params, None)

    def _hand_over(
        self, session_id: str, updates: list[Any], start: int = 0
    ) -> Awaitable[None] | None:
        if self._agent.closed:  # the link's end (its flow is the agent connection)
            return None
        for at in range(start, len(updates)):
            pending = self._pass_on(session_id, updates[at])
            if pending is not None:
                return self._then(pending, session_id, updates, at + 1)
        return None

    async def _then(
        self, pending: Awaitable[None], session_id: str, updates: list[Any], start: int
    ) -> None:
        await pending
        more = self._hand_over(session_id, updates, start)
        if more is not None:
            await more


async def _wait_for(pending: Awaitable[None]) -> None:
    await pending

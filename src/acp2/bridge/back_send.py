"""How the back bridge's lifted v2 updates reach its client, in the agent's order.

:class:`UpdateSender` has two ways, chosen by the kind of client link:

- a v2 JSON-RPC connection (``acp2 bridge -- V1_AGENT``): each update becomes a
  ``session/update`` frame by concatenation, as the agent runtime's emitter builds it
  (a cached per-session head, one encode of the update, no notification object);
- acp2's own client in this process (a :class:`~acp2.bridge.local.LocalEnd`): each
  update is handed to the client's handler with its params bytes (one encode, for
  listeners), and as the object itself when the lifter made it for this update alone
  (:data:`FRESH`); the rest the client decodes from the bytes, so nothing the lifter
  keeps is shared. What the client returns to await (an ``idle`` it orders behind a
  prompt's answer) is awaited before the next update, as a connection's reader does.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any, Final

from anyio.abc import TaskGroup

import acp2.schema as v2
import acp2.schema.methods as v2m
from acp2.bridge.local import LocalEnd
from acp2.rpc import Connection
from acp2.rpc.messages import SESSION_UPDATE_PREFIX
from acp2.schema.codec import encode

__all__ = ["FRESH", "UpdateSender"]

#: Update kinds the lifter builds anew for each update: handed over as they are.
FRESH: Final = frozenset(
    {v2.AgentMessageChunk, v2.AgentThoughtChunk, v2.UserMessageChunk, v2.StateUpdate}
)


class UpdateSender:
    """Sends one bridge's lifted updates to ``client`` (see the module). ``agent`` is
    the v1 connection (a local link ends with it); ``task_group`` runs the waits of
    :meth:`send_soon`."""

    def __init__(
        self, agent: Connection, client: Connection | LocalEnd, task_group: TaskGroup
    ) -> None:
        self._agent = agent
        self._client = client
        self._tg = task_group
        self._heads: dict[str, bytes] = {}

    def send(self, session_id: str, updates: list[Any]) -> Awaitable[None] | None:
        """Send ``updates`` of ``session_id``; an awaitable to await before sending on
        (only ever from a local client), or None. Nothing once the client is gone."""
        client = self._client
        if isinstance(client, LocalEnd):
            return self._hand_over(client, session_id, updates, 0)
        if client.closed:
            return None
        head = self._head(session_id, SESSION_UPDATE_PREFIX)
        for update in updates:
            client.send_frame_nowait(head + encode(update) + b"}}")
        return None

    def send_soon(self, session_id: str, updates: list[Any]) -> None:
        """:meth:`send` for callers that cannot await (the terminals' output)."""
        pending = self.send(session_id, updates)
        if pending is not None:
            self._tg.start_soon(_wait_for, pending)

    def forget(self, session_id: str) -> None:
        """Drop what is cached for a closed session."""
        self._heads.pop(session_id, None)

    def _head(self, session_id: str, prefix: bytes) -> bytes:
        head = self._heads.get(session_id)
        if head is None:
            head = prefix + b'{"sessionId":' + encode(session_id) + b',"update":'
            self._heads[session_id] = head
        return head

    def _hand_over(
        self, client: LocalEnd, session_id: str, updates: list[Any], start: int
    ) -> Awaitable[None] | None:
        if self._agent.closed:  # the link's end (its flow is the agent connection)
            return None
        head = self._head(session_id, b"")
        deliver, method = client.deliver, v2m.SESSION_UPDATE.name
        for at in range(start, len(updates)):
            update = updates[at]
            raw = head + encode(update) + b"}"
            if type(update) in FRESH:
                params = v2.UpdateSessionNotification(session_id=session_id, update=update)
                pending = deliver(method, params, raw)
            else:
                pending = deliver(method, None, raw)
            if pending is not None:
                return self._then(pending, client, session_id, updates, at + 1)
        return None

    async def _then(
        self,
        pending: Awaitable[None],
        client: LocalEnd,
        session_id: str,
        updates: list[Any],
        start: int,
    ) -> None:
        await pending
        more = self._hand_over(client, session_id, updates, start)
        if more is not None:
            await more


async def _wait_for(pending: Awaitable[None]) -> None:
    await pending

"""Per-session state of the front bridge: the v1 projector and which idle ends which prompt.

A v2 agent answers ``session/prompt`` as soon as the prompt is accepted, with its
``messageId``; the turn then sends ``user_message`` with that id, ``running``, its
updates and one ``idle``. A v1 client expects the prompt held open until that idle, so
:class:`Turns` pairs each idle with the ``user_message`` that began its turn. The pairing
is made as the updates arrive (in the v2 connection's reader), so it does not depend on
when the prompt's handler resumes after its response. Work without a user message (an
agent-initiated turn) ends with an idle that answers nothing.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from typing import Final

import acp2.schema as v2
from acp2 import _aio
from acp2.compat.v1.project import V1Projector
from acp2.rpc.messages import SESSION_UPDATE_PREFIX
from acp2.schema.codec import encode

__all__ = ["BridgeSession", "Turns"]

#: Idles kept for prompts whose handler has not asked yet (or never will: a replay).
_KEPT: Final = 32


class Turns:
    """Pairs v2 idles with the user messages that began their turns (see the module)."""

    def __init__(self) -> None:
        self._current: str | None = None
        self._ended: OrderedDict[str, v2.StateUpdate] = OrderedDict()
        #: Bare futures (acp2._aio waiters: ~0.2 µs, an anyio.Event ~2 µs per prompt).
        self._waiting: dict[str, asyncio.Future[v2.StateUpdate]] = {}

    def observe(self, update: object) -> None:
        """Feed one v2 session update, in arrival order."""
        if isinstance(update, v2.UserMessage):
            self._current = update.message_id
        elif isinstance(update, v2.StateUpdate) and update.state == "idle":
            message_id, self._current = self._current, None
            if message_id is not None:
                self._end(message_id, update)

    def _end(self, message_id: str, idle: v2.StateUpdate) -> None:
        waiter = self._waiting.pop(message_id, None)
        if waiter is not None:
            _aio.resolve(waiter, idle)
            return
        self._ended[message_id] = idle
        while len(self._ended) > _KEPT:
            self._ended.popitem(last=False)

    async def wait(self, message_id: str) -> v2.StateUpdate:
        """The idle that ended the turn of ``message_id`` (waits for it)."""
        if message_id in self._ended:
            return self._ended.pop(message_id)
        waiter = self._waiting.get(message_id)
        if waiter is None:
            waiter = self._waiting[message_id] = _aio.new_waiter()
        try:
            return await waiter
        finally:
            if self._waiting.get(message_id) is waiter:
                del self._waiting[message_id]  # given up (cancelled): nothing waits now

    def forget(self) -> None:
        """Drop the pairings a replay left behind (no prompt waits for them)."""
        self._ended.clear()
        self._current = None


class BridgeSession:
    """One session as the v1 client sees it: its projector and its turns."""

    def __init__(self, session_id: str, *, boolean_options: bool) -> None:
        self.projector = V1Projector(session_id, boolean_options=boolean_options)
        self.turns = Turns()
        #: The session id as JSON (its bytes on the wire).
        self.wire_id = encode(session_id)
        #: How this session's v1 ``session/update`` frames start, up to the update.
        self.frame_head = SESSION_UPDATE_PREFIX + b'{"sessionId":' + self.wire_id + b',"update":'
        #: Updates held back until the client has this session's ``session/new`` answer
        #: (``None`` once it has): the v2 answer precedes them, so must the v1 one.
        self.backlog: list[v2.UpdateSessionNotification] | None = None

    def offer_mode(self, options: object) -> None:
        """Remember which v2 config option the client was offered as its v1 ``modes``."""
        from acp2.compat.v1.agent_side import mode_option

        option = mode_option(options)
        if option is not None:
            self.projector.mode_config_id = option.config_id
            self.projector.note_mode(option.current_value)

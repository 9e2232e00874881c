"""Per-session state of the front bridge: the v1 projector and which idle ends which prompt.

A v2 agent answers ``session/prompt`` as soon as the prompt is accepted, with its
``messageId``; the turn then sends ``user_message`` with that id, ``running``, its
updates and one ``idle``. A v1 client expects the prompt held open until that idle, so
:class:`Turns` pairs each idle with the ``user_message`` that began its turn. The pairing
is made as the updates arrive (in the v2 connection's reader, or in process in the
emitting call), so it does not depend on when the prompt's handler resumes after its
response; the prompt's answer is given in the call that delivers its idle
(:meth:`Turns.answer`, an :class:`acp2.rpc.Later` in the front bridge). Work without a
user message (an agent-initiated turn) ends with an idle that answers nothing.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Final

import acp2.schema as v2
from acp2.compat.v1.project import V1Projector
from acp2.rpc.update_frames import frame_head

__all__ = ["BridgeSession", "Turns"]

#: Idles kept for prompts whose handler has not asked yet (or never will: a replay).
_KEPT: Final = 32


class Turns:
    """Pairs v2 idles with the user messages that began their turns (see the module)."""

    def __init__(self) -> None:
        self._current: str | None = None
        self._ended: OrderedDict[str, v2.StateUpdate] = OrderedDict()
        #: What to call with the idle of each prompt still running, by its message id.
        self._waiting: dict[str, Callable[[v2.StateUpdate], None]] = {}

    def observe(self, update: object) -> None:
        """Feed one v2 session update, in arrival order."""
        if isinstance(update, v2.UserMessage):
            self._current = update.message_id
        elif isinstance(update, v2.StateUpdate) and update.state == "idle":
            message_id, self._current = self._current, None
            if message_id is not None:
                self._end(message_id, update)

    def _end(self, message_id: str, idle: v2.StateUpdate) -> None:
        then = self._waiting.pop(message_id, None)
        if then is not None:
            then(idle)
            return
        self._ended[message_id] = idle
        while len(self._ended) > _KEPT:
            self._ended.popitem(last=False)

    def answer(self, message_id: str, then: Callable[[v2.StateUpdate], None]) -> None:
        """Call ``then(idle)`` with the idle that ends the turn of ``message_id``: now if
        it ended already, else in the call that :meth:`observe` s it. One per id: a
        second call replaces the first (a v2 agent names each prompt once)."""
        idle = self._ended.pop(message_id, None)
        if idle is not None:
            then(idle)
        else:
            self._waiting[message_id] = then

    def give_up(self, message_id: str) -> None:
        """Nothing waits for ``message_id`` any more (its prompt was cancelled)."""
        self._waiting.pop(message_id, None)

    def forget(self) -> None:
        """Drop the pairings a replay left behind (no prompt waits for them)."""
        self._ended.clear()
        self._current = None


class BridgeSession:
    """One session as the v1 client sees it: its projector and its turns."""

    def __init__(self, session_id: str, *, boolean_options: bool) -> None:
        self.projector = V1Projector(session_id, boolean_options=boolean_options)
        self.turns = Turns()
        #: How this session's v1 ``session/update`` frames start, up to the update.
        #: (v1's ``session/update`` is v2's in name and params: the same layout.)
        self.frame_head = frame_head(session_id)
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

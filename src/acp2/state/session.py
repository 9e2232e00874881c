"""``SessionState``: everything a client renders for one session (pure, no IO)."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any, Final

from msgspec import Raw

from acp2.state.entities import (
    ChildSession,
    CompactionState,
    MessageState,
    PlanState,
    SessionMessageState,
    TerminalState,
    TokenTotals,
    ToolCallState,
    UsageState,
)

__all__ = ["MAX_NOTICES", "Entry", "SessionState"]

#: How many recent notices a session keeps (notices are fire-and-forget, not history).
MAX_NOTICES: Final = 50

#: One item of the timeline, in first-seen order.
Entry = MessageState | ToolCallState | PlanState | CompactionState


def _notices() -> deque[Any]:
    return deque(maxlen=MAX_NOTICES)


@dataclass(slots=True, eq=False)
class SessionState:
    """The reduced state of one session, updated in place by :func:`acp2.state.reduce`.

    Keyed stores (``messages`` by ``(kind, messageId)``, ``tool_calls``, ``terminals``,
    ``plans``, ``compactions``) hold the entities; ``timeline`` holds messages, tool calls,
    plans and compactions once each, in the order they were first seen. Terminals are not
    in the timeline: tool calls reference them by id, in either order (TM-02).

    ``foreground`` is the last reported state, kept verbatim: ``idle``, ``running``,
    ``requires_action`` or an unknown string, which counts as busy (PL-11). A new session
    is ``idle`` until told otherwise (D-14). ``stop_reason`` / ``error`` describe the last
    foreground work that ended; ``background`` is None until an agent reports it (PL-25).
    ``work`` counts pieces of foreground work started, ``completed`` those that ended
    (a repeated ``idle`` is not a new completion, PL-24). ``replays`` counts the
    ``replay_complete`` markers received (each ends one resume's replay). ``subagents``
    holds the child sessions this session announced (Preview ``subagent_update``), by id,
    in the order they were announced; messages between sessions (Preview
    ``session_message*``) are :class:`SessionMessageState` entries of kind ``"session"``
    in ``messages`` and the timeline. ``turn_usage`` is the token ``usage`` of the last
    idle ``state_update`` that reported one (the work that ended), ``token_totals`` sums
    every such report (None until the first). ``notices`` keeps the latest notices (a property,
    made on first use). Unknown updates are kept raw in ``unknown``, in arrival order
    (EX-07).
    """

    session_id: str | None = None
    timeline: list[Entry] = field(default_factory=list)
    messages: dict[tuple[str, str], MessageState] = field(default_factory=dict)
    tool_calls: dict[str, ToolCallState] = field(default_factory=dict)
    terminals: dict[str, TerminalState] = field(default_factory=dict)
    plans: dict[str, PlanState] = field(default_factory=dict)
    compactions: dict[str, CompactionState] = field(default_factory=dict)
    subagents: dict[str, ChildSession] = field(default_factory=dict)
    usage: UsageState | None = None
    turn_usage: Any = None
    token_totals: TokenTotals | None = None
    config_options: list[Any] = field(default_factory=list)
    available_commands: list[Any] = field(default_factory=list)
    title: str | None = None
    updated_at: str | None = None
    meta: dict[str, Any] | None = None
    foreground: str = "idle"
    stop_reason: str | None = None
    error: Any = None
    background: list[Any] | None = None
    work: int = 0
    completed: int = 0
    replays: int = 0
    unknown: list[Raw] = field(default_factory=list)
    #: The deque behind :attr:`notices`, made on first use (760 bytes even when empty).
    _notices: deque[Any] | None = field(default=None, init=False, repr=False)

    @property
    def notices(self) -> deque[Any]:
        """The latest :data:`MAX_NOTICES` notices, oldest first (fire-and-forget, not
        history); created on first use, so a session that never gets one costs nothing."""
        notices = self._notices
        if notices is None:
            notices = self._notices = _notices()
        return notices

    @property
    def busy(self) -> bool:
        """True unless the last reported state is ``idle`` (unknown states are busy, PL-11)."""
        return self.foreground != "idle"

    def message(self, kind: str, message_id: str) -> MessageState:
        """Return the message ``(kind, message_id)``, creating an empty one at the end of
        the timeline when it is unseen (MU-04, MU-05)."""
        key = (kind, message_id)
        msg = self.messages.get(key)
        if msg is None:
            msg = self.messages[key] = MessageState(kind, message_id)
            self.timeline.append(msg)
        return msg

    def session_message(self, message_id: str) -> SessionMessageState:
        """Return the message between sessions ``message_id`` (kind ``"session"``),
        creating an empty one at the end of the timeline when it is unseen."""
        key = ("session", message_id)
        held = self.messages.get(key)
        if isinstance(held, SessionMessageState):
            return held
        msg = self.messages[key] = SessionMessageState("session", message_id)
        if held is None:
            self.timeline.append(msg)
        else:  # made by message("session", ...): keep its place, now with its ids
            msg.replace_content(held.content)
            msg.meta = held.meta
            self.timeline[self.timeline.index(held)] = msg
        return msg

    def tool_call(self, tool_call_id: str) -> ToolCallState:
        """Return the tool call ``tool_call_id``, creating a ``pending`` / ``other`` one at
        the end of the timeline when it is unseen (TC-02)."""
        call = self.tool_calls.get(tool_call_id)
        if call is None:
            work = self.work if self.busy else None
            call = self.tool_calls[tool_call_id] = ToolCallState(tool_call_id, work=work)
            self.timeline.append(call)
        return call

    def terminal(self, terminal_id: str) -> TerminalState:
        """Return the terminal ``terminal_id``, creating an empty one when unseen (TM-02)."""
        term = self.terminals.get(terminal_id)
        if term is None:
            term = self.terminals[terminal_id] = TerminalState(terminal_id)
        return term

    def compaction(self, compaction_id: str) -> CompactionState:
        """Return the compaction ``compaction_id``, creating an ``in_progress`` one at the
        end of the timeline when unseen (its first update fixes its position)."""
        comp = self.compactions.get(compaction_id)
        if comp is None:
            comp = self.compactions[compaction_id] = CompactionState(compaction_id)
            self.timeline.append(comp)
        return comp

    def set_plan(self, plan_id: str, plan: Any) -> PlanState:
        """Replace the plan ``plan_id`` by ``plan`` (a new id joins the timeline, PN-02/03)."""
        entry = self.plans.get(plan_id)
        if entry is None:
            entry = self.plans[plan_id] = PlanState(plan_id, plan)
            self.timeline.append(entry)
        else:
            entry.plan = plan
        return entry

    @staticmethod
    def text_of(message: MessageState) -> str:
        """Return the text of ``message``: its ``text`` blocks joined, other blocks skipped."""
        return message.text

    def agent_text(self) -> str:
        """Return the agent's text for the last turn: every agent message after the last
        user message, in timeline order, separated by blank lines (empty ones skipped).
        Thoughts are not included."""
        parts: list[str] = []
        for entry in reversed(self.timeline):
            if isinstance(entry, MessageState):
                if entry.kind == "user":
                    break
                if entry.kind == "agent" and entry.text:
                    parts.append(entry.text)
        return "\n\n".join(reversed(parts))

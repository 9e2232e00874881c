"""Which timeline entries are final enough to print once, above the live region.

A terminal log cannot be rewritten, so each entry is printed when it will not change any
more, in timeline order: a message once a later entry follows it (or the turn ended), a
tool call once its status is final, a compaction once it left ``in_progress``. Plans are
snapshots, so one is printed when first reached and again at the end of the turn if it
changed since; in between the live region shows its current state. An entry that is not
settled holds back the entries after it, so the log keeps the agent's order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from acp2.state import CompactionState, Entry, MessageState, PlanState, SessionState, ToolCallState

__all__ = ["NoticeTracker", "Settler", "plan_signature"]


def plan_signature(plan: PlanState) -> tuple[tuple[str, str], ...]:
    """What a printed plan showed: each entry's ``(content, status)``."""
    return tuple((str(entry.content), str(entry.status)) for entry in plan.entries)


def _settled(entry: Entry, is_last: bool, messages_done: bool) -> bool:
    if isinstance(entry, MessageState):
        return messages_done or not is_last
    if isinstance(entry, ToolCallState):
        return entry.finished
    if isinstance(entry, CompactionState):
        return entry.status != "in_progress"
    return True


@dataclass
class Settler:
    """Hands out each entry of ``state.timeline`` once, when it is settled.

    ``index`` is the first timeline position not handed out yet; ``printed_plans`` maps
    plan ids to the :func:`plan_signature` last handed out.
    """

    state: SessionState
    index: int = 0
    printed_plans: dict[str, tuple[Any, ...]] = field(default_factory=dict)

    def skip_all(self) -> None:
        """Treat everything in the timeline so far as already printed."""
        self.index = len(self.state.timeline)
        for plan_id, plan in self.state.plans.items():
            self.printed_plans[plan_id] = plan_signature(plan)

    def take(self, *, final: bool = False, messages_done: bool = False) -> list[Entry]:
        """Return the entries to print now, in order, and mark them printed.

        ``final`` (the turn is over) settles everything and adds every plan that changed
        since it was printed. ``messages_done`` settles a trailing message (used before a
        permission prompt, when the agent is waiting and its text is complete).
        """
        out: list[Entry] = []
        timeline = self.state.timeline
        while self.index < len(timeline):
            entry = timeline[self.index]
            is_last = self.index == len(timeline) - 1
            if not final and not _settled(entry, is_last, messages_done):
                break
            self.index += 1
            if isinstance(entry, PlanState):
                self.printed_plans[entry.plan_id] = plan_signature(entry)
            out.append(entry)
        if final:
            for plan in self.changed_plans():
                self.printed_plans[plan.plan_id] = plan_signature(plan)
                out.append(plan)
        return out

    def pending(self) -> list[Entry]:
        """Entries not printed yet (the live region's body), then the plans that were
        printed and changed since; plans not reached yet are kept in timeline order."""
        timeline = self.state.timeline
        return [*timeline[self.index :], *self.changed_plans()]

    def changed_plans(self) -> list[PlanState]:
        """Plans already handed out whose entries changed since."""
        return [
            plan
            for plan_id, plan in self.state.plans.items()
            if plan_id in self.printed_plans and self.printed_plans[plan_id] != plan_signature(plan)
        ]


class NoticeTracker:
    """Hands out each notice of ``state.notices`` once (the deque keeps only the latest)."""

    def __init__(self, state: SessionState) -> None:
        self.state = state
        self._last: Any = None

    def take(self) -> list[Any]:
        """Notices that arrived since the last call, oldest first."""
        notices = list(self.state.notices)
        start = 0
        for index in range(len(notices) - 1, -1, -1):
            if notices[index] is self._last:
                start = index + 1
                break
        if notices:
            self._last = notices[-1]
        return notices[start:]

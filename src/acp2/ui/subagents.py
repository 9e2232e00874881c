"""The chat's view of child sessions (Preview subagents), folded to one line per event.

A child's own transcript stays in its session (``session.children``); the chat prints a
line when a child appears and each time its mirrored state changes:
``↳ Researcher started -- reads the docs`` ... ``↳ Researcher: end_turn -- Found three
pages.`` (its latest agent message, first line). Every text is the agent's and sanitized.
"""

from __future__ import annotations

from typing import Any, Final

from acp2.sanitize import line

__all__ = ["SubagentTracker"]

#: The longest excerpt of a child's message shown on its line.
EXCERPT: Final = 80


class SubagentTracker:
    """Hands out each new child and state change once (:meth:`take`)."""

    def __init__(self) -> None:
        self._seen: dict[str, tuple[Any, Any]] = {}

    def take(self, session: Any) -> list[str]:
        """Lines for what changed among ``session``'s children since the last call."""
        if session is None:
            return []
        lines = []
        for child_id, entry in session.state.subagents.items():
            name = line(entry.title or "") or line(child_id)
            state = getattr(entry.state, "state", None)
            stop = getattr(entry.state, "stop_reason", None)
            before = self._seen.get(child_id)
            if before is None:
                about = f" -- {line(entry.description)}" if entry.description else ""
                lines.append(f"↳ {name} started{about}")
                before = (None, None)
            if (state, stop) != before and state == "idle":
                lines.append(f"↳ {name}: {line(stop or 'idle')}{_excerpt(session, child_id)}")
            self._seen[child_id] = (state, stop)
        return lines


def _excerpt(session: Any, child_id: str) -> str:
    child = getattr(session, "children", {}).get(child_id)
    if child is None:
        return ""
    texts = [m.text for m in child.state.messages.values() if m.kind == "agent" and m.text]
    if not texts:
        return ""
    first = line(texts[-1].strip().splitlines()[0] if texts[-1].strip() else "")
    if len(first) > EXCERPT:
        first = first[: EXCERPT - 1] + "…"
    return f" -- {first}" if first else ""

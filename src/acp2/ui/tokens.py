"""Token counts the agent reported on its idles (Preview ``usage``), in words.

The chat's status bar shows the last piece of work's counts (``tok 164: 150 in, 14 out``)
and ``/cost`` adds the session's sums (:class:`acp2.state.TokenTotals`). Counts are ints
the reducer already checked; nothing here is the agent's text.
"""

from __future__ import annotations

from typing import Any

from acp2.state import SessionState
from acp2.ui.style import tokens_text

__all__ = ["token_lines", "turn_tokens_text"]


def turn_tokens_text(state: SessionState) -> str | None:
    """``tok 164 (150 in, 14 out)`` for the last idle that reported usage; None if none."""
    usage = state.turn_usage
    if usage is None:
        return None
    return f"tok {tokens_text(usage.total_tokens)} ({_split(usage)})"


def token_lines(state: SessionState) -> list[str]:
    """``/cost``'s token lines: the last work's counts and the session's sums (empty when
    the agent reported none)."""
    usage, totals = state.turn_usage, state.token_totals
    if usage is None or totals is None:
        return []
    turns = "1 turn" if totals.turns == 1 else f"{totals.turns} turns"
    return [
        f"last turn {tokens_text(usage.total_tokens)} tokens: {_split(usage)}",
        f"session {tokens_text(totals.total)} tokens over {turns}: {_split_totals(totals)}",
    ]


def _split(usage: Any) -> str:
    parts = [f"{tokens_text(usage.input_tokens)} in", f"{tokens_text(usage.output_tokens)} out"]
    parts += _optional(
        ("thought", usage.thought_tokens),
        ("cached", usage.cached_read_tokens),
        ("cache written", usage.cached_write_tokens),
    )
    return ", ".join(parts)


def _split_totals(totals: Any) -> str:
    parts = [f"{tokens_text(totals.input)} in", f"{tokens_text(totals.output)} out"]
    parts += _optional(
        ("thought", totals.thought or None),
        ("cached", totals.cached_read or None),
        ("cache written", totals.cached_write or None),
    )
    return ", ".join(parts)


def _optional(*pairs: tuple[str, Any]) -> list[str]:
    return [f"{tokens_text(value)} {name}" for name, value in pairs if type(value) is int]

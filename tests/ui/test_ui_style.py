"""Formats and glyphs shared by the renderers."""

from __future__ import annotations

import pytest
from rich.cells import cell_len

from acp2.schema import Cost
from acp2.state import SessionState, UsageState
from acp2.ui.style import (
    KIND_ICONS,
    PLAN_MARKS,
    STATUS_GLYPHS,
    cost_text,
    elapsed_text,
    foreground_text,
    kind_icon,
    plan_mark,
    status_glyph,
    strip_ansi,
    tokens_text,
    usage_text,
)


@pytest.mark.parametrize(
    ("count", "shown"),
    [(0, "0"), (950, "950"), (1000, "1k"), (1284, "1.3k"), (128_000, "128k"), (1_200_000, "1.2M")],
)
def test_token_counts_are_short_for_people(count: int, shown: str) -> None:
    assert tokens_text(count) == shown


def test_usage_shows_context_used_of_size_with_percent_and_cost() -> None:
    usage = UsageState(1200, 200_000, Cost(amount=0.01, currency="USD"))
    assert usage_text(usage) == "ctx 1.2k/200k (1%) · $0.01"


def test_usage_without_cost_or_size_still_reads_well() -> None:
    assert usage_text(UsageState(10, 0)) == "ctx 10/0"
    assert usage_text(None) is None


def test_a_cost_in_another_currency_names_it() -> None:
    assert cost_text(Cost(amount=1.5, currency="EUR")) == "1.5 EUR"
    assert cost_text(None) is None


def test_elapsed_time_switches_to_minutes_after_a_minute() -> None:
    assert elapsed_text(4.25) == "4.2s"
    assert elapsed_text(187) == "3m07s"


def test_unknown_kinds_and_statuses_get_neutral_glyphs() -> None:
    """Open enums: a future tool kind or status is drawn, never an error."""
    assert kind_icon("_custom") == KIND_ICONS["other"]
    assert status_glyph("_paused") == STATUS_GLYPHS["in_progress"]
    assert plan_mark("_skipped") == PLAN_MARKS["pending"]


def test_every_glyph_is_one_cell_wide() -> None:
    """The layout at 80 columns depends on it."""
    glyphs = [*KIND_ICONS.values(), *(g for g, _ in STATUS_GLYPHS.values())]
    glyphs += [g for g, _ in PLAN_MARKS.values()]
    assert all(cell_len(glyph) == 1 for glyph in glyphs)


def test_foreground_state_in_words() -> None:
    state = SessionState(foreground="requires_action")
    assert foreground_text(state) == "waiting for you"
    state.foreground = "running"
    assert foreground_text(state) == "running"


def test_ansi_escapes_are_stripped_for_the_transcript() -> None:
    assert strip_ansi("\x1b[32mok\x1b[0m done\x1b]0;title\x07") == "ok done"

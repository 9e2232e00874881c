"""Numbered choices typed at the chat's prompts (src/acp2/ui/choose.py)."""

from __future__ import annotations

import pytest

from acp2.ui.choose import picked


@pytest.mark.parametrize(("answer", "index"), [("1", 0), ("3", 2), ("03", 2)])
def test_a_number_in_range_picks_that_choice(answer: str, index: int) -> None:
    assert picked(answer, 3) == index


@pytest.mark.parametrize("answer", ["", "0", "4", "-1", "+1", " 1", "x", "\u00b2", "\u0661"])
def test_anything_else_picks_nothing(answer: str) -> None:
    assert picked(answer, 3) is None

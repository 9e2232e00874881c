"""Attack: hiding text after a deeply nested markdown list (issue 24, item 9). The chat's
markdown parser stops at its nesting limit (about ten nested lists) and dropped the rest
of the message without a sign. Now the text from the first line too deep for it is shown
as plain text, so the user sees everything the agent said."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ui"))

from ui_helpers import render, say, state_from

from acp2.ui.blocks import View, entry_block


def nested_list(depth: int, tail: str) -> str:
    items = [("  " * level) + f"- level{level}" for level in range(depth)]
    return "\n".join(["Intro", *items, "", tail])


def shown(text: str) -> str:
    state = state_from(say(text))
    return render(entry_block(state.timeline[0], state, View()), width=120)


def test_text_after_a_twelve_level_nested_list_reaches_the_screen() -> None:
    out = shown(nested_list(12, "Now run rm -rf ~ to clean up"))
    assert "Now run rm -rf ~ to clean up" in out
    assert all(f"level{level}" in out for level in range(12))
    assert "• level0" in out  # the part the parser handles is still markdown


def test_a_deep_blockquote_does_not_swallow_the_rest() -> None:
    text = "> " * 25 + "deep\n\nthe end"
    out = shown(text)
    assert "deep" in out
    assert "the end" in out


def test_the_hidden_part_is_still_sanitized() -> None:
    out = shown(nested_list(12, "tail \x1b]0;title\x07 text"))
    assert "tail" in out
    assert "text" in out
    assert "\x1b" not in out
    assert "\x07" not in out


def test_a_list_the_parser_handles_is_all_markdown() -> None:
    out = shown(nested_list(8, "after"))
    assert "• level7" in out
    assert "after" in out

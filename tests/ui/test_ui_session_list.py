"""The session list (acp2.ui.session_list): ages, titles, the first-prompt notes."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace

import pytest

from acp2.ui import session_list
from acp2.ui.session_list import age_text, first_prompts, note_first_prompt, title_of

NOW = datetime(2026, 12, 6, 12, 0, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("updated", "said"),
    [
        ("2026-12-06T11:59:30Z", "just now"),
        ("2026-12-06T11:55:00Z", "5m ago"),
        ("2026-12-06T09:00:00+00:00", "3h ago"),
        ("2026-12-04T12:00:00", "2d ago"),
        ("yesterday", ""),
        (None, ""),
    ],
)
def test_the_age_is_short_and_unreadable_times_say_nothing(updated: object, said: str) -> None:
    assert age_text(updated, NOW) == said


def test_the_agents_title_wins_then_the_first_prompt_then_untitled() -> None:
    prompts = {"s1": "fix the bug"}
    assert title_of(SimpleNamespace(session_id="s1", title="Bug hunt"), prompts) == "Bug hunt"
    assert title_of(SimpleNamespace(session_id="s1", title=None), prompts) == "fix the bug"
    assert title_of(SimpleNamespace(session_id="s2", title=""), prompts) == "(untitled)"
    shown = title_of(SimpleNamespace(session_id="s3", title="\x1b[31mred\x1b[0m"), prompts)
    assert "\x1b" not in shown


def test_only_the_first_prompt_of_a_session_is_kept_and_the_notes_are_bounded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ACP2_DATA_DIR", str(tmp_path))
    monkeypatch.setattr(session_list, "KEPT", 3)
    note_first_prompt("s1", "  first   line\nsecond line")
    note_first_prompt("s1", "a later prompt")
    assert first_prompts() == {"s1": "first line"}
    for number in range(2, 6):
        note_first_prompt(f"s{number}", f"prompt {number}")
    assert list(first_prompts()) == ["s3", "s4", "s5"]

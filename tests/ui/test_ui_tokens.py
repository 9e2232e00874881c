"""The tokens an agent reports on its idles (Preview ``usage``) in the chat: the status
bar's last-turn counts and ``/cost``'s per-turn and session sums."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from ui_helpers import capture, state_from, text_of

from acp2.state import SessionState
from acp2.ui.interactive import InteractiveChat
from acp2.ui.slash import SlashCommands
from acp2.ui.tokens import token_lines, turn_tokens_text
from helpers import timeouts


def idle(**usage: int) -> dict[str, Any]:
    return {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn",
            "usage": usage}  # fmt: skip


def two_turns() -> SessionState:
    return state_from(
        {"sessionUpdate": "state_update", "state": "running"},
        idle(totalTokens=164, inputTokens=150, outputTokens=14, cachedReadTokens=80),
        {"sessionUpdate": "state_update", "state": "running"},
        idle(totalTokens=1200, inputTokens=1000, outputTokens=200),
    )


class FakeSession:
    def __init__(self, state: SessionState) -> None:
        self.state, self.id, self.cwd = state, "sess_1", "/"


def test_the_last_turn_shows_its_total_and_its_split() -> None:
    assert turn_tokens_text(two_turns()) == "tok 1.2k (1k in, 200 out)"


def test_no_usage_reported_shows_nothing() -> None:
    assert turn_tokens_text(state_from()) is None
    assert token_lines(state_from()) == []


def test_cost_lines_give_the_last_turn_and_the_session_sums_with_cached_tokens() -> None:
    assert token_lines(two_turns()) == [
        "last turn 1.2k tokens: 1k in, 200 out",
        "session 1.4k tokens over 2 turns: 1.1k in, 214 out, 80 cached",
    ]


def test_the_status_bar_shows_the_last_turns_tokens() -> None:
    chat = InteractiveChat(capture())
    chat.session = FakeSession(two_turns())  # type: ignore[assignment]
    text = "".join(part for _, part in chat.toolbar(200))  # type: ignore[union-attr]
    assert text.startswith(" idle · end_turn · tok 1.2k (1k in, 200 out)")


@pytest.mark.anyio
async def test_cost_prints_the_token_sums_when_no_context_usage_was_reported() -> None:
    console = capture(100, 20)
    chat = InteractiveChat(console)
    chat.session = FakeSession(two_turns())  # type: ignore[assignment]
    with anyio.fail_after(timeouts.TIMEOUT):
        await SlashCommands(chat).do_cost("")
    out = text_of(console)
    assert "session 1.4k tokens over 2 turns" in out
    assert "has not reported usage" not in out

"""The chat's view of background work (acp2.ui.background; RFD "v2 Background Work"):
the status-line count, the ``/bg`` lines and the item ``/cancel-bg N`` picks; peer text
is sanitized."""

from __future__ import annotations

from typing import Any

from ui_helpers import capture, state_from, text_of

from acp2.ui import background
from acp2.ui.interactive import InteractiveChat

LISTED = [
    {"type": "tool_call", "toolCallId": "c1"},
    {"type": "terminal", "terminalId": "t1"},
    {"type": "_job"},
]


def _state() -> Any:
    return state_from(
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "c1",
            "title": "Watch\x1b[31m the tests",
            "capabilities": {"cancel": {}},
        },
        {"sessionUpdate": "terminal_update", "terminalId": "t1", "command": "make build"},
        {"sessionUpdate": "state_update", "state": "idle", "background": LISTED},
    )


def _printed(lines: list[Any]) -> str:
    console = capture(100)
    for line in lines:
        console.print(line)
    return text_of(console)


class FakeSession:
    def __init__(self, state: Any) -> None:
        self.state = state
        self.id = "sess_1"
        self.cwd = "/"


def test_the_status_line_counts_the_listed_items_only_when_there_are_some() -> None:
    assert background.status_part(_state()) == "3 in background"
    assert background.status_part(state_from()) is None
    chat = InteractiveChat(capture())
    chat.session = FakeSession(_state())
    shown = "".join(text for _, text in chat.toolbar(200))  # type: ignore[union-attr]
    assert shown.startswith(" idle · 3 in background │")


def test_bg_lists_each_item_numbered_with_how_to_cancel_it() -> None:
    assert _printed(background.listing(_state())).splitlines() == [
        "  1 tool call “Watch^[[31m the tests”  /cancel-bg 1",  # the escape shown, inert
        "  2 terminal “make build”  (cannot be cancelled)",
        "  3 _job  (cannot be cancelled)",
    ]


def test_bg_says_whether_nothing_runs_or_the_agent_does_not_say() -> None:
    assert _printed(background.listing(state_from())) == "the agent does not report background work"
    empty = state_from({"sessionUpdate": "state_update", "state": "idle", "background": []})
    assert _printed(background.listing(empty)) == "nothing runs in the background"


def test_cancel_bg_picks_a_cancellable_item_by_number() -> None:
    item, label = background.pick(_state(), "1")
    assert item is not None
    assert item.item_id == "c1"
    assert label == "tool call “Watch^[[31m the tests”"
    assert background.pick(_state(), "2") == (
        None,
        "the agent does not let terminal “make build” be cancelled",
    )
    assert (
        background.pick(_state(), "4")[1] == "usage: /cancel-bg N, N from 1 to 3 (/bg lists them)"
    )
    assert background.pick(_state(), "x")[0] is None
    assert background.pick(_state(), "\u00b2")[0] is None  # a digit int() refuses
    assert background.pick(state_from(), "1") == (None, "nothing runs in the background")

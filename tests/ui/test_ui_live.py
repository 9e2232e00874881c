"""The live region (acp2.ui.live): status line, cropping, pausing."""

from __future__ import annotations

from rich.text import Text
from ui_helpers import capture, render, say, state_from, text_of, tool

from acp2.ui.live import LiveRegion, PausableLive, TailCrop, status_line
from acp2.ui.settle import Settler


def test_the_status_line_shows_state_elapsed_usage_and_the_cancel_hint() -> None:
    state = state_from(
        {"sessionUpdate": "state_update", "state": "running"},
        {"sessionUpdate": "usage_update", "used": 1300, "size": 128000},
    )
    line = status_line(state, phase=None, elapsed=4.2, hint="ctrl-c to cancel").plain
    assert line[1:] == " running · 4.2s · ctx 1.3k/128k (1%) · ctrl-c to cancel"


def test_the_status_line_shows_when_the_agent_waits_for_the_user() -> None:
    state = state_from({"sessionUpdate": "state_update", "state": "requires_action"})
    assert status_line(state, phase=None, elapsed=1).plain.startswith("◆ waiting for you")


def test_a_phase_such_as_cancelling_replaces_the_foreground_state() -> None:
    state = state_from({"sessionUpdate": "state_update", "state": "running"})
    assert "cancelling…" in status_line(state, phase="cancelling…", elapsed=1).plain


def test_tail_crop_keeps_the_last_lines_and_marks_the_cut() -> None:
    text = Text("\n".join(f"line {i}" for i in range(30)))
    out = render(TailCrop(text, 5)).splitlines()
    assert out == ["…", "line 26", "line 27", "line 28", "line 29"]


def test_the_live_region_shows_unsettled_entries_above_the_status_line() -> None:
    state = state_from(
        {"sessionUpdate": "state_update", "state": "running"},
        say("Working on it"),
        tool("call_1", title="Run tests", kind="execute", status="in_progress"),
    )
    settler = Settler(state)
    settler.take()  # the message settled (a tool call follows it)
    region = LiveRegion(state, settler, clock=lambda: 10.0)
    out = render(region).splitlines()
    assert out[0] == "◐ $ Run tests"
    assert out[-1].endswith("running · 0.0s · ctrl-c to cancel")


def test_the_live_region_never_grows_taller_than_the_terminal() -> None:
    state = state_from(say("\n\n".join(f"paragraph {i}" for i in range(100))))
    region = LiveRegion(state, Settler(state), clock=lambda: 0.0)
    console = capture(80, 20)
    console.print(region)
    lines = text_of(console).splitlines()
    assert len(lines) <= 20
    assert "paragraph 99" in lines[-2]


def test_pausing_the_live_region_keeps_what_was_printed_meanwhile() -> None:
    """A resumed rich Live would move up over its old height and erase the lines printed
    while it was stopped; the pausable one starts its first frame where the cursor is."""
    state = state_from(
        {"sessionUpdate": "state_update", "state": "running"},
        tool("call_1", title="Step one", status="in_progress"),
        tool("call_2", title="Step two", status="in_progress"),
    )
    console = capture()
    live = PausableLive(console, LiveRegion(state, Settler(state), clock=lambda: 0.0))
    with live:
        live.refresh()
        live.stop()
        console.print("ANSWERED")
        live.start()
        assert live.active
        live.refresh()
    assert not live.active
    raw = console.file.getvalue()  # type: ignore[attr-defined]
    before_first_frame = raw.split("ANSWERED", 1)[1].split("Step one", 1)[0]
    assert "\x1b[1A" not in before_first_frame

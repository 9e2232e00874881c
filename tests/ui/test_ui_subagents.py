"""The chat's folded view of child sessions (acp2.ui.subagents): one line when a child
appears, one each time it goes idle, the agent's text sanitized."""

from __future__ import annotations

from types import SimpleNamespace

from acp2.schema import SubagentState, SubagentUpdate
from acp2.state import SessionState, reduce


def session_with(*updates: SubagentUpdate) -> SimpleNamespace:
    state = SessionState(session_id="s")
    for update in updates:
        reduce(state, update)
    return SimpleNamespace(state=state, children={})


def test_a_child_is_announced_once_and_each_idle_is_reported_once() -> None:
    from acp2.ui.subagents import SubagentTracker

    tracker = SubagentTracker()
    session = session_with(SubagentUpdate(session_id="c", title="Re\x1b[2Jsearcher"))
    (started,) = tracker.take(session)
    assert started.startswith("↳ Re")
    assert "started" in started
    assert "\x1b" not in started
    assert tracker.take(session) == []
    reduce(session.state, SubagentUpdate(session_id="c", state=SubagentState(state="running")))
    assert tracker.take(session) == []
    idle = SubagentState(state="idle", stop_reason="end_turn")
    reduce(session.state, SubagentUpdate(session_id="c", state=idle))
    (done,) = tracker.take(session)
    assert done.endswith(": end_turn")
    assert tracker.take(session) == []


def test_a_child_without_a_title_is_named_by_its_id() -> None:
    from acp2.ui.subagents import SubagentTracker

    (line,) = SubagentTracker().take(session_with(SubagentUpdate(session_id="c9")))
    assert line == "↳ c9 started"

"""Which entries are printed once, and when (acp2.ui.settle)."""

from __future__ import annotations

from ui_helpers import feed, plan, say, state_from, tool

from acp2.state import MessageState, PlanState, ToolCallState
from acp2.ui.settle import NoticeTracker, Settler


def test_a_message_settles_once_a_later_entry_follows_it() -> None:
    state = state_from(say("Hello"))
    settler = Settler(state)
    assert settler.take() == []
    feed(state, tool("call_1", title="Read a.py", kind="read", status="pending"))
    taken = settler.take()
    assert [type(e) for e in taken] == [MessageState]
    assert settler.take() == []


def test_a_running_tool_call_holds_back_the_entries_after_it() -> None:
    """The log keeps the agent's order: nothing jumps over an unfinished tool call."""
    state = state_from(tool("call_1", title="Run", status="in_progress"), say("done?"))
    settler = Settler(state)
    assert settler.take() == []
    assert [type(e) for e in settler.pending()] == [ToolCallState, MessageState]
    feed(state, tool("call_1", status="completed"), say("!", message_id="agent_2"))
    taken = settler.take()
    assert [type(e) for e in taken] == [ToolCallState, MessageState]


def test_final_settles_everything_including_the_last_message() -> None:
    state = state_from(tool("call_1", status="in_progress"), say("still going"))
    settler = Settler(state)
    assert len(settler.take(final=True)) == 2
    assert settler.pending() == []


def test_messages_done_settles_a_trailing_message_before_a_permission_prompt() -> None:
    state = state_from(say("I will edit the file."))
    settler = Settler(state)
    assert [type(e) for e in settler.take(messages_done=True)] == [MessageState]


def test_a_plan_is_printed_when_reached_and_again_at_the_end_if_it_changed() -> None:
    state = state_from(plan(("Read", "completed"), ("Fix", "pending")))
    settler = Settler(state)
    assert [type(e) for e in settler.take()] == [PlanState]
    feed(state, plan(("Read", "completed"), ("Fix", "in_progress")))
    assert settler.take() == []
    assert [type(e) for e in settler.pending()] == [PlanState]
    feed(state, plan(("Read", "completed"), ("Fix", "completed")))
    final = settler.take(final=True)
    assert len(final) == 1
    assert isinstance(final[0], PlanState)
    assert final[0].entries[1].status == "completed"
    assert settler.take(final=True) == []


def test_an_unchanged_plan_is_not_printed_twice() -> None:
    state = state_from(plan(("Read", "pending")))
    settler = Settler(state)
    settler.take()
    feed(state, plan(("Read", "pending")))
    assert settler.take(final=True) == []


def test_skip_all_marks_the_history_as_already_shown() -> None:
    state = state_from(say("old"), plan(("Read", "pending")))
    settler = Settler(state)
    settler.skip_all()
    assert settler.take(final=True) == []
    feed(state, say("new", message_id="agent_2"))
    assert [e.text for e in settler.take(final=True) if isinstance(e, MessageState)] == ["new"]


def test_each_notice_is_handed_out_once() -> None:
    state = state_from({"sessionUpdate": "notice", "severity": "warning", "title": "Slow"})
    notices = NoticeTracker(state)
    assert [n.title for n in notices.take()] == ["Slow"]
    assert notices.take() == []
    feed(state, {"sessionUpdate": "notice", "severity": "info", "title": "Fast"})
    assert [n.title for n in notices.take()] == ["Fast"]

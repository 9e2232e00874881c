"""Resolving the reported background list (RFD "v2 Background Work", D-13, PL-25, D-22,
D-24): :func:`acp2.state.background_items` and :func:`acp2.state.cancel_advertised`."""

from __future__ import annotations

from state_updates import feed, state_update, tool

from acp2.state import BackgroundItem, SessionState, background_items


def _terminal(terminal_id: str, **fields: object) -> dict[str, object]:
    return {"sessionUpdate": "terminal_update", "terminalId": terminal_id, **fields}


def test_items_resolve_titles_and_cancel_from_the_entities_they_name() -> None:
    state = feed(
        tool("c1", title="Watch", status="in_progress", capabilities={"cancel": {}}),
        _terminal("t1", command="make", capabilities={"cancel": {}}),
        tool("c2", title="Not cancellable", status="pending"),
        state_update(
            "idle",
            background=[
                {"type": "tool_call", "toolCallId": "c1"},
                {"type": "terminal", "terminalId": "t1"},
                {"type": "tool_call", "toolCallId": "c2"},
            ],
        ),
    )
    assert background_items(state) == [
        BackgroundItem("tool_call", "c1", "Watch", True),
        BackgroundItem("terminal", "t1", "make", True),
        BackgroundItem("tool_call", "c2", "Not cancellable", False),
    ]


def test_cancel_is_withdrawn_by_a_final_status_an_exit_or_an_empty_capabilities() -> None:
    listed = [{"type": "tool_call", "toolCallId": "c"}, {"type": "terminal", "terminalId": "t"}]
    state = feed(
        tool("c", capabilities={"cancel": {}}),
        _terminal("t", capabilities={"cancel": {}}),
        state_update("running", background=listed),
        tool("c", status="completed"),  # the agent forgot to withdraw it: final wins
        _terminal("t", exitStatus={"exitCode": 1}),
    )
    assert [i.cancellable for i in background_items(state)] == [False, False]
    feed(tool("c", status="in_progress", capabilities={}), state=state)
    assert background_items(state)[0].cancellable is False


def test_unknown_items_and_subagents_still_count_as_running_work() -> None:
    state = feed(
        state_update(
            "idle",
            background=[{"type": "subagent", "sessionId": "child"}, {"type": "_job", "n": 1}],
        )
    )
    assert background_items(state) == [
        BackgroundItem("subagent", "child", None, False),
        BackgroundItem("_job", None, None, False),
    ]


def test_an_agent_that_never_reports_background_leaves_it_unknown() -> None:
    state = feed(state_update("running"), state_update("idle", stopReason="end_turn"))
    assert state.background is None
    assert background_items(state) == []
    assert background_items(SessionState()) == []

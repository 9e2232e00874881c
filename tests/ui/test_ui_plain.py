"""The plain transcript renderer (acp2.ui.plain): what a non-TTY run prints."""

from __future__ import annotations

from ui_helpers import diff_content, plan, say, state_from, terminal_output, tool

from acp2.state import MessageState, PlanState, ToolCallState
from acp2.ui.plain import entry_text, message_text, notice_text, stop_text, usage_line


def test_messages_thoughts_and_user_prompts() -> None:
    state = state_from(
        say("fix it", message_id="user_1", kind="user"),
        say("Let me look.", message_id="thought_1", kind="thought"),
        say("Looking **now**."),
    )
    user, thought, agent = (e for e in state.timeline if isinstance(e, MessageState))
    assert message_text(user) == "> fix it"
    assert message_text(user, show_user=False) is None
    assert message_text(thought) == "(thinking) Let me look."
    assert message_text(agent) == "Looking **now**."


def test_an_empty_message_prints_nothing() -> None:
    state = state_from(say(""))
    assert entry_text(state.timeline[0], state) is None


def test_a_tool_call_with_a_diff_prints_the_unified_patch_indented() -> None:
    state = state_from(
        tool("call_1", title="Edit a.py", kind="edit", status="completed", content=[diff_content()])
    )
    text = entry_text(state.timeline[0], state)
    assert text is not None
    lines = text.splitlines()
    assert lines[0] == "[edit] Edit a.py (completed)"
    assert "    -old = 1" in lines
    assert "    +new = 2" in lines


def test_terminal_output_is_printed_without_escape_codes_with_its_exit_status() -> None:
    state = state_from(
        {"sessionUpdate": "terminal_update", "terminalId": "t1", "command": "pytest"},
        tool(
            "call_1",
            title="Run",
            kind="execute",
            status="completed",
            content=[{"type": "terminal", "terminalId": "t1"}],
        ),
        terminal_output("t1", b"\x1b[31mFAILED\x1b[0m\r\n1 failed\n"),
        {"sessionUpdate": "terminal_update", "terminalId": "t1", "exitStatus": {"exitCode": 1}},
    )
    call = next(e for e in state.timeline if isinstance(e, ToolCallState))
    assert entry_text(call, state) == (
        "[execute] Run (completed)\n    $ pytest\n    FAILED\n    1 failed\n    [exit 1]"
    )


def test_a_terminal_killed_by_a_signal_says_so() -> None:
    state = state_from(
        tool("c", title="Run", content=[{"type": "terminal", "terminalId": "t"}]),
        {
            "sessionUpdate": "terminal_update",
            "terminalId": "t",
            "exitStatus": {"signal": "SIGTERM"},
        },
    )
    text = entry_text(state.timeline[0], state)
    assert text is not None
    assert text.endswith("[killed by SIGTERM]")


def test_a_plan_prints_as_ascii_checkboxes() -> None:
    state = state_from(
        plan(
            ("Read", "completed"),
            ("Fix", "in_progress"),
            ("Test", "pending"),
            ("Skip", "cancelled"),
            ("Odd", "_later"),
        )
    )
    entry = next(e for e in state.timeline if isinstance(e, PlanState))
    assert entry_text(entry, state) == (
        "[plan]\n  [x] Read\n  [~] Fix\n  [ ] Test\n  [-] Skip\n  [_later] Odd"
    )


def test_usage_and_stop_lines() -> None:
    state = state_from(
        {
            "sessionUpdate": "usage_update",
            "used": 1284,
            "size": 128000,
            "cost": {"amount": 0.02, "currency": "USD"},
        }
    )
    assert usage_line(state) == "usage: ctx 1.3k/128k (1%) · $0.02"
    assert usage_line(state_from()) is None
    assert stop_text("end_turn") == "[stop: end_turn]"
    assert stop_text("error", {"code": -32603, "message": "boom"}) == "[stop: error - boom]"
    assert stop_text(None) == "[stop: unknown]"


def test_notice_line() -> None:
    state = state_from(
        {"sessionUpdate": "notice", "severity": "warning", "title": "Slow", "description": "retry"}
    )
    assert notice_text(state.notices[0]) == "[notice warning] Slow: retry"


def test_a_message_between_sessions_is_labelled_with_its_sessions_not_shown_as_agent_text() -> None:
    state = state_from(
        {
            "sessionUpdate": "session_message",
            "messageId": "sm1",
            "senderSessionId": "sess_child\x1b[2J",
            "content": [{"type": "text", "text": "Found **it**."}],
        }
    )
    assert entry_text(state.timeline[0], state) == "[message sess_child^[[2J → ?] Found **it**."

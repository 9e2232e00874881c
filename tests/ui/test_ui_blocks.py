"""Timeline entries drawn with rich, checked on an 80-column capture console."""

from __future__ import annotations

from typing import TypeVar

from ui_helpers import (
    capture,
    diff_content,
    feed,
    plan,
    render,
    say,
    state_from,
    terminal_output,
    text_of,
    tool,
)

from acp2.state import MessageState, PlanState, SessionState, ToolCallState
from acp2.ui.blocks import View, entry_block, message_block, notice_block, tool_call_block

E = TypeVar("E")


def _only(state: SessionState, kind: type[E]) -> E:
    return next(e for e in state.timeline if isinstance(e, kind))


def test_agent_text_is_rendered_as_markdown() -> None:
    state = state_from(say("# Done\n\nFixed **two** bugs:\n\n- `a.py`\n- `b.py`\n"))
    out = render(entry_block(state.timeline[0], state, View()))
    assert "Done" in out
    assert "Fixed two bugs:" in out
    assert "• a.py" in out
    assert "**" not in out


def test_a_settled_thought_is_one_dim_collapsed_line() -> None:
    words = " ".join(f"word{i}" for i in range(40))
    state = state_from(say(words, message_id="thought_1", kind="thought"))
    out = render(message_block(_only(state, MessageState), View()))
    assert out.startswith("✻ word0 word1")
    assert out.endswith("…")
    assert len(out.splitlines()) == 1


def test_thoughts_are_shown_in_full_when_expanded() -> None:
    words = " ".join(f"word{i}" for i in range(40))
    state = state_from(say(words, message_id="thought_1", kind="thought"))
    out = render(message_block(_only(state, MessageState), View(expand_thoughts=True)))
    assert "word39" in out


def test_a_streaming_thought_shows_its_last_lines() -> None:
    text = "\n".join(f"line {i}" for i in range(10))
    state = state_from(say(text, message_id="thought_1", kind="thought"))
    out = render(message_block(_only(state, MessageState), View(live=True)))
    assert "line 9" in out
    assert "line 0" not in out
    assert out.startswith("✻ … ")


def test_thoughts_are_dimmed() -> None:
    state = state_from(say("pondering", message_id="thought_1", kind="thought"))
    console = capture(color=True)
    console.print(message_block(_only(state, MessageState), View()))
    assert "\x1b[2" in console.export_text(styles=True)


def test_user_messages_can_be_left_out_when_the_prompt_is_on_screen() -> None:
    state = state_from(say("hi there", message_id="user_1", kind="user"))
    message = state.timeline[0]
    assert isinstance(message, MessageState)
    assert render(message_block(message, View())) == "❯ hi there"
    assert message_block(message, View(show_user=False)) is None


def test_a_tool_call_shows_status_kind_icon_title_and_a_highlighted_diff() -> None:
    state = state_from(
        tool("call_1", title="Edit a.py", kind="edit", status="completed", content=[diff_content()])
    )
    call = _only(state, ToolCallState)
    console = capture(color=True)
    console.print(tool_call_block(call, state, View()))
    out = text_of(console)
    assert out.splitlines()[0] == "✓ ✎ Edit a.py"
    assert "  -old = 1" in out
    assert "  +new = 2" in out
    styled = console.export_text(styles=True)
    assert "\x1b[3" in styled  # the diff lines are coloured


def test_a_diff_without_a_patch_lists_the_changed_paths() -> None:
    content = {"type": "diff", "changes": [{"operation": "add", "path": "/w/new.py"}]}
    state = state_from(tool("call_1", title="Create", kind="edit", content=[content]))
    out = render(tool_call_block(_only(state, ToolCallState), state, View()))
    assert "add /w/new.py" in out


def test_a_tool_call_shows_its_terminal_command_output_and_exit_status() -> None:
    state = state_from(
        {"sessionUpdate": "terminal_update", "terminalId": "t1", "command": "make test"},
        tool(
            "call_1",
            title="Run tests",
            kind="execute",
            status="in_progress",
            content=[{"type": "terminal", "terminalId": "t1"}],
        ),
        terminal_output("t1", b"\x1b[32mok\x1b[0m 1\nok 2\n"),
        {"sessionUpdate": "terminal_update", "terminalId": "t1", "exitStatus": {"exitCode": 0}},
    )
    out = render(tool_call_block(_only(state, ToolCallState), state, View()))
    assert out.splitlines() == ["◐ $ Run tests", "  $ make test", "  ok 1", "  ok 2", "  exit 0"]


def test_long_terminal_output_keeps_its_last_lines() -> None:
    output = "".join(f"line {i}\n" for i in range(50)).encode()
    state = state_from(
        tool(
            "call_1", title="ls", kind="execute", content=[{"type": "terminal", "terminalId": "t"}]
        ),
        terminal_output("t", output),
    )
    out = render(tool_call_block(_only(state, ToolCallState), state, View(output_lines=5)))
    assert "… 45 lines before" in out
    assert "line 49" in out
    assert "line 44" not in out


def test_a_failed_tool_call_says_so_with_its_message() -> None:
    text = {"type": "content", "content": {"type": "text", "text": "Permission denied"}}
    state = state_from(tool("call_1", title="Edit", kind="edit", status="failed", content=[text]))
    out = render(tool_call_block(_only(state, ToolCallState), state, View()))
    assert out.splitlines() == ["✗ ✎ Edit  failed", "  Permission denied"]


def test_a_plan_is_a_checklist() -> None:
    state = state_from(plan(("Read", "completed"), ("Fix", "in_progress"), ("Test", "pending")))
    out = render(entry_block(_only(state, PlanState), state, View()))
    assert out.splitlines() == ["☰ Plan", "  ☑ Read", "  ◐ Fix", "  ☐ Test"]


def test_notices_show_their_title_and_description() -> None:
    state = state_from(
        {
            "sessionUpdate": "notice",
            "severity": "warning",
            "title": "Slow",
            "description": "retrying",
        }
    )
    assert render(notice_block(state.notices[0])) == "! Slow\n  retrying"


def test_unknown_content_is_summarised_not_dropped() -> None:
    image = {
        "type": "content",
        "content": {"type": "image", "data": "AA==", "mimeType": "image/png"},
    }
    odd = {"type": "_future", "x": 1}
    state = state_from(tool("call_1", title="Look", content=[image, odd]))
    out = render(tool_call_block(_only(state, ToolCallState), state, View()))
    assert "[image image/png]" in out
    assert "[unsupported content]" in out


def test_everything_fits_in_80_columns() -> None:
    long_line = "x" * 200
    state = state_from(
        say(long_line),
        tool("call_1", title="T" * 120, kind="edit", content=[diff_content(f"+{long_line}\n")]),
        plan((long_line, "pending")),
    )
    feed(state, say(long_line, message_id="thought_1", kind="thought"))
    console = capture(80)
    for entry in state.timeline:
        block = entry_block(entry, state, View())
        if block is not None:
            console.print(block)
    assert all(len(line) <= 80 for line in text_of(console).splitlines())


def test_a_message_between_sessions_is_labelled_and_not_rendered_as_markdown() -> None:
    state = state_from(
        {
            "sessionUpdate": "session_message",
            "messageId": "sm1",
            "senderSessionId": "sess_1",
            "recipientSessionId": "sess_child",
            "content": [{"type": "text", "text": "Read **the docs**."}],
        }
    )
    out = render(entry_block(state.timeline[0], state, View()))
    assert out.splitlines() == ["⇄ sess_1 → sess_child", "Read **the docs**."]

"""What the interactive chat shows besides the entries: the status toolbar, the live
region's queue and typing line, collapsed tool output; and its own commands run in
process against the test agent."""

from __future__ import annotations

import io
from typing import Any

import anyio
import pytest
from ui_helpers import capture, render, served_test_agent, state_from, text_of, tool

from acp2.schema import SessionConfigSelect, SessionConfigSelectOption
from acp2.state import UsageState
from acp2.ui.blocks import entry_block
from acp2.ui.chatview import COLLAPSED_LINES, collapsed_view, status_extras
from acp2.ui.interactive import InteractiveChat
from acp2.ui.live import LiveRegion
from acp2.ui.settle import Settler
from helpers import timeouts


class FakeSession:
    def __init__(self, state: Any) -> None:
        self.state = state
        self.id = "sess_1"
        self.cwd = "/"


def model_option(current: str) -> SessionConfigSelect:
    return SessionConfigSelect(
        config_id="model",
        name="Model",
        category="model",
        current_value=current,
        options=[SessionConfigSelectOption(value="opus", name="Opus 9")],
    )


def toolbar_text(chat: InteractiveChat, width: int = 200) -> str:
    return "".join(text for _, text in chat.toolbar(width))  # type: ignore[union-attr]


def test_the_toolbar_shows_model_usage_cost_and_title() -> None:
    state = state_from({"sessionUpdate": "session_info_update", "title": "Fix\nthe  bug"})
    state.config_options = [model_option("opus")]
    state.usage = UsageState(used=1500, size=100_000)
    chat = InteractiveChat(capture())
    chat.session = FakeSession(state)
    text = toolbar_text(chat)
    assert text.startswith(" idle · ctx 1.5k/100k (2%) · Opus 9 · “Fix the bug” │")
    assert "/help commands" in text
    assert "/help" not in toolbar_text(chat, width=80)  # the keys give way to the status


def test_the_toolbar_asks_for_a_second_ctrl_c_while_armed() -> None:
    chat = InteractiveChat(capture())
    chat.session = FakeSession(state_from())
    chat.guard.press()
    assert toolbar_text(chat).startswith(" press ctrl-c again to exit ")
    assert "/help" not in toolbar_text(chat)


def test_status_extras_are_empty_without_model_or_title() -> None:
    assert status_extras(state_from()) == []


def test_the_live_region_shows_the_queue_and_the_line_being_typed() -> None:
    state = state_from()
    region = LiveRegion(state, Settler(state), phase="running")
    region.queued = ["first", "two\nlines"]
    region.typing = lambda: "drafting"
    region.extras = lambda: ["Opus 9"]
    out = render(region).splitlines()
    assert out[0].startswith("⠋ running · ")
    assert out[0].endswith("· Opus 9")
    assert out[1:] == ["⧗ queued first", "⧗ queued two ↵ lines", "❯ drafting▏"]


def test_long_tool_output_is_collapsed_with_the_key_that_expands_it() -> None:
    lines = "\n".join(f"line {i}" for i in range(1, 21))
    state = state_from(
        tool(
            "t1",
            title="Run",
            status="completed",
            content=[{"type": "content", "content": {"type": "text", "text": lines}}],
        )
    )
    view = collapsed_view()
    out = render(entry_block(state.timeline[0], state, view))
    assert f"… {20 - COLLAPSED_LINES} lines before · ctrl-o to expand" in out
    assert "line 12" not in out
    assert "line 13" in out


# -- the commands, in process ---------------------------------------------------------


async def run_lines(*lines: str) -> tuple[InteractiveChat, str]:
    console = capture(100, 40)
    chat = InteractiveChat(console, permission="deny", stdin=io.StringIO())
    with anyio.fail_after(timeouts.TIMEOUT):
        async with served_test_agent(chat.policy()) as client:
            chat.attach(await client.new_session())
            for line in lines:
                await chat.handle(line)
    return chat, text_of(console)


@pytest.mark.anyio
async def test_help_is_answered_by_the_chat_and_no_turn_runs() -> None:
    chat, out = await run_lines("/help")
    assert "/sessions" in out
    assert "/echo text" in out
    assert "(agent) Echo the input" in out
    assert "/model" not in out  # the test agent has no model option
    assert chat.session.state.work == 0
    assert chat.session.state.timeline == []


@pytest.mark.anyio
async def test_an_unknown_command_and_cost_before_usage_are_answered_locally() -> None:
    chat, out = await run_lines("/frobnicate", "/cost", "/model")
    assert "unknown command /frobnicate" in out
    assert "has not reported usage" in out
    assert "the agent offers no model choice" in out
    assert chat.session.state.work == 0


@pytest.mark.anyio
async def test_quit_leaves_and_agent_commands_still_reach_the_agent() -> None:
    chat, out = await run_lines("/echo via the command", "/quit")
    assert "via the command" in out
    assert chat.leaving


def test_a_toggle_during_a_turn_reaches_the_live_region() -> None:
    chat = InteractiveChat(capture())
    state = state_from()
    chat.session = FakeSession(state)
    chat.region = LiveRegion(state, Settler(state))
    chat.toggle_output()
    assert chat.region.view.live
    assert chat.region.view.output_lines == chat.view.output_lines > COLLAPSED_LINES
    chat.toggle_thoughts()
    assert chat.region.view.expand_thoughts

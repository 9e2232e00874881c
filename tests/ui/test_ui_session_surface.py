"""The chat's ``/fork`` and ``/title`` against the test agent served in process (it
advertises ``session.fork`` and ``session.title``, as every acp2 agent does by default)."""

from __future__ import annotations

import io
from typing import Any

import anyio
import pytest
from ui_helpers import capture, served_test_agent, text_of

from acp2.coder import build_coder_agent
from acp2.ui.commands import parse_line
from acp2.ui.interactive import InteractiveChat
from acp2.ui.turnkeys import AT_ONCE
from helpers import timeouts
from helpers.inprocess import served

pytestmark = pytest.mark.anyio


async def run_lines(*lines: str) -> tuple[InteractiveChat, Any, str]:
    console = capture(120, 40)
    chat = InteractiveChat(console, permission="deny", stdin=io.StringIO())
    with anyio.fail_after(timeouts.TIMEOUT):
        async with served_test_agent(chat.policy()) as client:
            chat.client = client
            chat.attach(await client.new_session())
            first = chat.session
            for line in lines:
                await chat.handle(line)
    return chat, first, text_of(console)


def test_fork_title_and_steer_are_builtins_and_steer_runs_during_a_turn() -> None:
    assert parse_line("/fork", []).kind == "builtin"
    assert parse_line("/title New name", []).arg == "New name"
    assert parse_line("/steer use tabs", []).arg == "use tabs"
    assert "steer" in AT_ONCE


async def test_steer_needs_text_and_an_agent_that_takes_steering() -> None:
    _, _, out = await run_lines("/steer", "/steer use tabs")
    assert "usage: /steer TEXT" in out
    assert "/steer: The agent does not advertise steering" in out


async def test_steer_with_nothing_running_says_so_and_sends_no_prompt() -> None:
    console = capture(120, 40)
    chat = InteractiveChat(console, permission="deny", stdin=io.StringIO())
    with anyio.fail_after(timeouts.TIMEOUT):
        async with served(build_coder_agent(store=":memory:"), cwd="/tmp") as client:
            chat.client = client
            chat.attach(await client.new_session())
            await chat.handle("/steer use tabs")
    assert "nothing is running: send it as a prompt" in text_of(console)
    assert chat.session.state.work == 0


async def test_fork_moves_the_chat_to_a_new_session_and_names_the_old_one() -> None:
    chat, first, out = await run_lines("/fork")
    assert chat.session.id != first.id
    assert f"forked into {chat.session.id}; {first.id} is unchanged" in out
    assert first.closed  # closed on the agent, as /clear does: resumable by id


async def test_title_sets_the_agents_title_and_shows_it_back() -> None:
    chat, _, out = await run_lines("/title", "/title  Fix the\tbug ", "/title")
    assert "no title (/title NEW sets one)" in out
    assert "title set: Fix the bug" in out
    assert "title: Fix the bug" in out
    assert chat.session.state.title == "Fix the bug"

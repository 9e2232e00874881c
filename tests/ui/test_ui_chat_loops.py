"""Both chat loops driven in process against the test agent (no subprocess, no pty)."""

from __future__ import annotations

import io
from typing import Any

import anyio
import pytest
from ui_helpers import capture, served_test_agent, text_of

from acp2.ui.interactive import InteractiveChat
from acp2.ui.lines import LineReader
from acp2.ui.live import FPS, PausableLive
from acp2.ui.transcript import TranscriptChat
from helpers import timeouts

pytestmark = pytest.mark.anyio


async def transcript(lines: str, permission: str = "deny") -> tuple[int, str]:
    """Run the transcript chat on ``lines``; return its status and what it printed."""
    out = io.StringIO()
    chat = TranscriptChat(out, LineReader(io.StringIO(lines)), permission=permission)
    with anyio.fail_after(timeouts.TIMEOUT):
        async with served_test_agent(chat.policy()) as client:
            status = await chat.run(await client.new_session())
    return status, out.getvalue()


async def test_each_input_line_is_one_turn_with_a_stop_line() -> None:
    status, out = await transcript("echo hello world\n\nplan\n")
    assert status == 0
    lines = out.splitlines()
    assert lines[0].startswith("session sess_")
    assert lines[1:4] == ["> echo hello world", "hello world", "[stop: end_turn]"]
    assert "> plan" in lines
    assert "  [x] Run the tests" in lines
    assert lines[-1] == "[stop: end_turn]"
    assert len([line for line in lines if line.startswith(">")]) == 2


async def test_a_turn_that_does_not_end_with_end_turn_makes_the_status_1() -> None:
    status, out = await transcript("stop max_tokens\necho fine\n")
    assert status == 1
    assert "[stop: max_tokens]" in out.splitlines()


async def test_an_agent_error_is_shown_on_the_stop_line() -> None:
    status, out = await transcript("fail kaboom\n")
    assert status == 1
    assert "[stop: error - RuntimeError: kaboom]" in out


async def test_deny_rejects_and_logs_the_permission_request() -> None:
    _, out = await transcript("tools\n", permission="deny")
    assert "[permission] Allow editing hello.txt? -> rejected: Reject" in out
    assert "[edit] Edit hello.txt (failed)" in out
    assert "Permission denied; nothing was changed." in out


async def test_allow_shows_the_diff_the_terminal_and_usage() -> None:
    _, out = await transcript("tools\n", permission="allow")
    for expected in (
        "-> allowed: Allow",
        "[edit] Edit hello.txt (completed)",
        "    +hello, world",
        "    $ cat hello.txt",
        "    [exit 0]",
        "usage: ctx 1.2k/200k (1%) · $0.01",
    ):
        assert expected in out


async def test_ask_reads_the_choice_from_the_next_input_line() -> None:
    status, out = await transcript("permission Proceed?\n2\necho after\n", permission="ask")
    assert status == 0
    assert "[permission] Proceed?" in out
    assert "  A test question" in out
    assert "  -> allowed: Always allow" in out
    assert "You chose: allow_always" in out
    assert "> echo after" in out


async def test_a_resumed_session_prints_its_history_first() -> None:
    out = io.StringIO()
    chat = TranscriptChat(out, LineReader(io.StringIO("")))
    with anyio.fail_after(timeouts.TIMEOUT):
        async with served_test_agent(chat.policy()) as client:
            first = await client.new_session()
            await (await first.prompt("echo earlier words")).wait()
            resumed = await client.resume(first.id, replay=True)
            assert await chat.run(resumed, replayed=True) == 0
    assert out.getvalue().splitlines()[1:] == [
        "> echo earlier words",
        "earlier words",
        "--- resumed ---",
    ]


# -- the interactive loop, one turn at a time, on a capture console ----------------------


async def interactive_turns(*prompts: str, permission: str = "allow", **kw: Any) -> str:
    console = capture(80, 24)
    chat = InteractiveChat(console, permission=permission, stdin=io.StringIO())
    with anyio.fail_after(timeouts.TIMEOUT):
        async with served_test_agent(chat.policy()) as client:
            chat.attach(await client.new_session())
            for prompt in prompts:
                await chat.turn(prompt)
    return text_of(console)


async def test_an_interactive_turn_prints_the_reply_and_the_stop_line() -> None:
    out = await interactive_turns("echo hello there")
    assert "hello there" in out
    assert "✓ end_turn" in out


async def test_an_interactive_turn_with_fixed_permission_logs_the_decision() -> None:
    out = await interactive_turns("tools", permission="deny")
    assert "permission: Allow editing hello.txt? → rejected: Reject" in out
    assert "✗ ✎ Edit hello.txt  failed" in out


async def test_cancel_during_a_turn_shows_cancelled() -> None:
    console = capture(80, 24)
    chat = InteractiveChat(console, permission="deny", stdin=io.StringIO())
    with anyio.fail_after(timeouts.TIMEOUT):
        async with served_test_agent(chat.policy()) as client:
            session = await client.new_session()
            chat.attach(session)
            running = anyio.Event()
            session.add_listener(lambda update, raw: running.set() if session.state.busy else None)
            async with anyio.create_task_group() as group:
                group.start_soon(chat.turn, "wait")
                await running.wait()
                chat.request_cancel()
                assert chat.region is not None
                assert chat.region.phase == "cancelling…"
    assert "⊘ cancelled" in text_of(console)


async def test_the_live_region_is_redrawn_at_a_steady_rate_not_per_update(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """2000 chunks, a handful of frames: rendering is coalesced."""
    frames: list[float] = []
    original = PausableLive.refresh

    def counting(self: PausableLive) -> None:
        frames.append(anyio.current_time())
        original(self)

    monkeypatch.setattr(PausableLive, "refresh", counting)
    started = anyio.current_time()
    out = await interactive_turns("stream 2000")
    elapsed = anyio.current_time() - started
    assert "1999" in out
    assert len(frames) <= elapsed * FPS + 3


async def test_a_second_ctrl_c_while_cancelling_quits() -> None:
    console = capture(80, 24)
    chat = InteractiveChat(console, permission="deny", stdin=io.StringIO())
    with anyio.fail_after(timeouts.TIMEOUT):
        async with served_test_agent(chat.policy()) as client:
            session = await client.new_session()
            chat.attach(session)
            running = anyio.Event()
            session.add_listener(lambda update, raw: running.set() if session.state.busy else None)
            async with anyio.create_task_group() as group:
                group.start_soon(chat.turn, "wait")
                await running.wait()
                chat.request_cancel()
                chat.request_cancel()
    assert chat.quit


async def test_ctrl_t_expands_thoughts_and_shows_the_last_one_in_full() -> None:
    long_thought = " ".join(f"idea{i}" for i in range(30))
    console = capture(80, 24)
    chat = InteractiveChat(console, stdin=io.StringIO())
    with anyio.fail_after(timeouts.TIMEOUT):
        async with served_test_agent(chat.policy()) as client:
            chat.attach(await client.new_session())
            await chat.turn(f"think {long_thought}")
    settled = text_of(console).splitlines()[-3:]
    assert settled[0].startswith("✻ idea0 idea1")  # collapsed to one line
    assert settled[0].endswith("…")
    assert settled[1] == "Done thinking."
    assert settled[2].startswith("✓ end_turn")
    chat.toggle_thoughts()
    after = text_of(console).split(settled[2])[-1]
    assert "thoughts expanded" in after
    assert "idea29" in after
    chat.toggle_thoughts()
    assert "thoughts collapsed" in text_of(console)

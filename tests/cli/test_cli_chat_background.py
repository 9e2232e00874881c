"""``acp2 chat`` shows background work and cancels one item (RFD "v2 Background Work":
D-13, TC-13, TM-10), in a pseudo-terminal against ``acp2 test-agent``'s ``background``
scenario: ``/bg`` lists the items, ``/cancel-bg N`` cancels one and waits for the agent
to confirm (the status line's count: tests/ui/test_ui_background.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cli_helpers import TEST_AGENT
from pty_helpers import leave, pty_env, spawn_chat, wait_idle

pexpect = pytest.importorskip("pexpect")


@pytest.fixture
def chat(tmp_path: Path) -> Any:
    env = pty_env(tmp_path / "data")
    child = spawn_chat(["chat", "--", *TEST_AGENT], env, tmp_path, tmp_path / "pty.log")
    child.expect("❯")
    yield child
    if child.isalive():
        child.terminate(force=True)


def test_bg_lists_background_items_and_cancel_bg_cancels_one_at_a_time(chat: Any) -> None:
    chat.sendline("/bg")
    chat.expect("the agent does not report background work")  # unknown is not "none"
    chat.sendline("background")
    wait_idle(chat)
    chat.sendline("/bg")
    chat.expect("1 tool call “Watch the tests”")
    chat.expect("/cancel-bg 1")
    chat.expect("2 terminal “make build”")
    chat.expect("/cancel-bg 2")
    chat.sendline("/cancel-bg 1")
    chat.expect("cancelling tool call “Watch the tests”")
    chat.expect("tool call “Watch the tests” ended")
    chat.sendline("/cancel-bg 9")
    chat.expect("usage: /cancel-bg N, N from 1 to 1")
    chat.sendline("/cancel-bg 1")
    chat.expect("terminal “make build” ended")
    chat.sendline("/bg")
    chat.expect("nothing runs in the background")
    chat.expect("❯")
    assert leave(chat)[0] == 0


def test_leaving_with_background_work_says_it_stops(chat: Any) -> None:
    chat.sendline("background")
    wait_idle(chat)
    status, tail = leave(chat)
    assert status == 0
    assert "leaving stops the work still running: 2 in background" in tail


def test_bg_and_cancel_bg_typed_during_a_turn_run_at_once(chat: Any) -> None:
    chat.sendline("background")
    wait_idle(chat)
    chat.sendline("wait")
    chat.expect("ctrl-c to cancel")
    chat.send("/cancel-bg 1\r")  # runs beside the turn, not after it
    chat.expect("tool call “Watch the tests” ended")
    chat.send("/bg\r")
    chat.expect("1 terminal “make build”")
    chat.send("/cancel\r")
    chat.expect("⊘ cancelled")
    chat.expect("❯")
    assert leave(chat)[0] == 0

"""``acp2 chat`` and ``acp2 run`` off the happy path, in a pseudo-terminal (pexpect): what a
person sees when they answer, interrupt or mistype (issue 29, round 3)."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import TEST_AGENT
from pty_helpers import pty_env, spawn_chat

pexpect = pytest.importorskip("pexpect")


def test_a_plain_chat_on_a_terminal_asks_each_permission(tmp_path: Path) -> None:
    """``--plain`` on a terminal asks (as ``--help`` says), instead of rejecting."""
    child = spawn_chat(
        ["chat", "--plain", "--", *TEST_AGENT],
        pty_env(tmp_path / "data"),
        tmp_path,
        tmp_path / "pty.log",
    )
    child.expect("session ")
    child.sendline("tools")
    child.expect(r"choose \[")
    child.sendline("y")
    child.expect("-> allowed: Allow once")
    child.expect(r"\[stop: end_turn\]")
    child.sendeof()
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_ctrl_c_at_a_run_permission_question_cancels_the_turn_and_fails(tmp_path: Path) -> None:
    """The one-key question says "ctrl-c cancels the turn": it does, and the run fails."""
    child = spawn_chat(
        ["run", "tools", "--", *TEST_AGENT],
        pty_env(tmp_path / "data"),
        tmp_path,
        tmp_path / "pty.log",
    )
    child.expect("ctrl-c cancels the turn")
    child.sendcontrol("c")
    child.expect("-> declined")
    child.expect("the agent stopped: cancelled")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 1

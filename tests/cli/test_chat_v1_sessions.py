"""``acp2 chat`` with a v1 agent that cannot resume (issue 26, fault 3): leaving prints
why there is no resume command instead of one that would fail (a pseudo-terminal,
pexpect; the agent is ``v1_sessions_agent.py``)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from pty_helpers import leave, pty_env, spawn_chat

from acp2.ui.commands import V1_NO_RESUME
from acp2.ui.style import strip_ansi

pexpect = pytest.importorskip("pexpect")

AGENT = [sys.executable, str(Path(__file__).with_name("v1_sessions_agent.py"))]


def _leave_chat(tmp_path: Path, *flags: str) -> str:
    state = tmp_path / "state"
    state.mkdir()
    args = ["chat", "--", *AGENT, str(state), *flags]
    child = spawn_chat(args, pty_env(tmp_path / "data"), tmp_path, tmp_path / "pty.log")
    child.expect("❯")
    status, tail = leave(child)
    assert status == 0
    return " ".join(strip_ansi(tail).split())  # the line may wrap at the terminal's width


def test_leaving_a_chat_with_a_v1_agent_that_cannot_resume_says_why(tmp_path: Path) -> None:
    tail = _leave_chat(tmp_path)
    assert V1_NO_RESUME in tail
    assert "resume this session with" not in tail


def test_leaving_a_chat_with_a_v1_agent_that_loads_prints_the_resume_command(
    tmp_path: Path,
) -> None:
    tail = _leave_chat(tmp_path, "--load")
    assert "resume this session with" in tail
    assert "no resume command" not in tail

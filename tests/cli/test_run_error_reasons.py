"""``acp2 run`` and ``acp2 chat`` show the agent's reason for a failed request (issue 26,
fault 5): an agent that answers ``-32603 "Internal error"`` with the reason only in
``data.details`` (as the official SDKs' agents do) is printed with that reason, in one
line (real processes: acp2 and ``v2_failing_agent.py``)."""

from __future__ import annotations

import sys
from pathlib import Path

from cli_helpers import isolated_env, run_acp2

from helpers.timeouts import RUN_TIMEOUT

REASON = "the API key was revoked"
AGENT = [sys.executable, str(Path(__file__).with_name("v2_failing_agent.py")), REASON]


def _acp2(tmp_path: Path, *args: str) -> tuple[int, str, str]:
    done = run_acp2(
        *args,
        "--",
        *AGENT,
        stdin="",
        env=isolated_env(tmp_path / "data"),
        cwd=tmp_path,
        timeout=RUN_TIMEOUT,
    )
    return done.returncode, done.stdout, done.stderr


def test_run_prints_the_reason_of_a_failed_session_new(tmp_path: Path) -> None:
    code, _, stderr = _acp2(tmp_path, "run", "hello")
    assert code != 0
    assert stderr == f"acp2 run: error: Internal error: {REASON}\n"


def test_chat_prints_the_reason_of_a_failed_session_new(tmp_path: Path) -> None:
    code, stdout, stderr = _acp2(tmp_path, "chat", "--plain")
    assert code != 0
    assert f"[error] Internal error: {REASON}" in stdout + stderr


def test_run_prints_the_reason_of_a_turn_that_ended_in_error(tmp_path: Path) -> None:
    done = run_acp2(
        "run",
        "hello",
        "--",
        *AGENT,
        "--prompt",
        stdin="",
        env=isolated_env(tmp_path / "data"),
        cwd=tmp_path,
        timeout=RUN_TIMEOUT,
    )
    assert done.returncode != 0
    assert done.stderr == f"acp2 run: the agent stopped: error: Internal error: {REASON}\n"

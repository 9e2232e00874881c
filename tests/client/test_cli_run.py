"""``acp2 run`` end to end: a real ``acp2`` process driving ``acp2 test-agent`` over stdio."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

AGENT = [sys.executable, "-m", "acp2.cli.main", "test-agent"]
MISBEHAVING = str(Path(__file__).with_name("misbehaving_agent.py"))


def acp2_run(*args: str, agent: list[str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``acp2 run ARGS -- AGENT`` and return the finished process (bounded: 60 s)."""
    argv = [sys.executable, "-m", "acp2.cli.main", "run", *args, "--", *(agent or AGENT)]
    return subprocess.run(
        argv, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL, check=False
    )


def json_lines(out: str) -> list[dict[str, object]]:
    """Every stdout line parsed as one JSON object."""
    return [json.loads(line) for line in out.splitlines()]


def test_run_prints_the_agents_reply_and_exits_0_on_end_turn(tmp_path: Path) -> None:
    """Text mode: the final agent text on stdout, exit 0."""
    done = acp2_run("--cwd", str(tmp_path), "echo hello from run")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "hello from run\n"


def test_run_json_prints_every_update_then_a_summary_line() -> None:
    """--json: each session/update's update object, then sessionId / stopReason / text."""
    done = acp2_run("--json", "echo hi there")
    assert done.returncode == 0, done.stderr
    lines = json_lines(done.stdout)
    *updates, summary = lines
    assert all("sessionUpdate" in update for update in updates)
    kinds = [update["sessionUpdate"] for update in updates]
    assert "user_message" in kinds
    assert kinds[-1] == "state_update"
    assert summary["stopReason"] == "end_turn"
    assert summary["text"] == "hi there"
    assert str(summary["sessionId"]).startswith("sess_")


def test_run_json_passes_an_unknown_underscore_update_through_exactly() -> None:
    """EX-07: the `_acp2/custom` update is printed exactly as the agent sent it."""
    done = acp2_run("--json", "ext")
    assert done.returncode == 0, done.stderr
    expected = '{"sessionUpdate":"_acp2/custom","payload":{"n":1,"text":"custom"}}'
    assert expected in done.stdout.splitlines()


@pytest.mark.parametrize(
    ("permission", "reply"),
    [("allow", "Edited hello.txt."), ("deny", "Permission denied; nothing was changed.")],
)
def test_run_answers_permissions_by_the_chosen_policy(permission: str, reply: str) -> None:
    """--permission allow|deny: the tool runs or is refused; the turn ends normally."""
    done = acp2_run("--permission", permission, "tools")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == reply


def test_run_cancel_after_ends_the_work_cancelled_with_exit_1() -> None:
    """--cancel-after: session/cancel, then the agent's idle cancelled; exit non-zero."""
    done = acp2_run("--json", "--cancel-after", "0.5", "wait")
    assert done.returncode == 1
    assert json_lines(done.stdout)[-1]["stopReason"] == "cancelled"
    assert "cancelled" in done.stderr


def test_run_exits_non_zero_for_other_stop_reasons() -> None:
    """A stop reason other than end_turn is exit 1 and named on stderr."""
    done = acp2_run("stop max_tokens")
    assert done.returncode == 1
    assert "max_tokens" in done.stderr


def test_run_resume_prompts_an_existing_session(tmp_path: Path) -> None:
    """--resume SESSION_ID continues a stored session in a new agent process."""
    agent = [*AGENT, "--store", str(tmp_path / "h.sqlite")]
    first = acp2_run("--json", "--cwd", str(tmp_path), "echo one", agent=agent)
    session_id = str(json_lines(first.stdout)[-1]["sessionId"])
    second = acp2_run(
        "--json", "--cwd", str(tmp_path), "--resume", session_id, "echo two", agent=agent
    )
    assert second.returncode == 0, second.stderr
    summary = json_lines(second.stdout)[-1]
    assert summary == {"sessionId": session_id, "stopReason": "end_turn", "text": "two"}


def test_options_may_also_come_between_prompt_and_the_separator() -> None:
    """`acp2 run PROMPT --json -- AGENT` is read like `acp2 run --json PROMPT -- AGENT`."""
    argv = [sys.executable, "-m", "acp2.cli.main", "run", "echo x", "--json", "--", *AGENT]
    done = subprocess.run(
        argv, capture_output=True, text=True, timeout=60, check=False, stdin=subprocess.DEVNULL
    )
    assert done.returncode == 0, done.stderr
    assert json_lines(done.stdout)[-1]["text"] == "x"


def test_a_crashing_agent_is_exit_3_with_its_stderr() -> None:
    """The agent going away is reported with its stderr tail."""
    done = acp2_run("hello", agent=[sys.executable, MISBEHAVING, "exit-mid-turn"])
    assert done.returncode == 3
    assert "model backend exploded" in done.stderr


def test_a_missing_agent_command_is_a_usage_error() -> None:
    """No AGENT_COMMAND after `--`: exit 2."""
    argv = [sys.executable, "-m", "acp2.cli.main", "run", "hello", "--"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2
    assert "AGENT_COMMAND" in done.stderr


def test_run_timeout_gives_up_with_exit_3() -> None:
    """--timeout bounds the whole run; the agent is stopped and the exit status is 3."""
    done = acp2_run("--timeout", "1", "wait")
    assert done.returncode == 3
    assert "no answer within 1 s" in done.stderr


def test_an_agent_command_that_cannot_start_is_exit_3() -> None:
    """A missing executable is reported, not a traceback."""
    done = acp2_run("hello", agent=["/nonexistent/acp2-agent"])
    assert done.returncode == 3
    assert "acp2 run: error:" in done.stderr
    assert "Traceback" not in done.stderr

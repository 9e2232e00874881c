"""``acp2 run`` end to end: a real ``acp2`` process driving ``acp2 test-agent`` over stdio."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from helpers.timeouts import RUN_TIMEOUT

AGENT = [sys.executable, "-m", "acp2.cli.main", "test-agent"]
MISBEHAVING = str(Path(__file__).with_name("misbehaving_agent.py"))


def acp2_run(*args: str, agent: list[str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``acp2 run ARGS -- AGENT`` and return the finished process (bounded: 60 s)."""
    argv = [sys.executable, "-m", "acp2.cli.main", "run", *args, "--", *(agent or AGENT)]
    return subprocess.run(
        argv,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
        stdin=subprocess.DEVNULL,
        check=False,
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
        argv,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
        check=False,
        stdin=subprocess.DEVNULL,
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
    done = subprocess.run(argv, capture_output=True, text=True, timeout=RUN_TIMEOUT, check=False)
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


def acp2_run_input(*args: str, stdin: str) -> subprocess.CompletedProcess[str]:
    """Run ``acp2 run ARGS -- AGENT`` with ``stdin`` as its input (a pipe); bounded."""
    argv = [sys.executable, "-m", "acp2.cli.main", "run", *args, "--", *AGENT]
    return subprocess.run(
        argv, input=stdin, capture_output=True, text=True, timeout=RUN_TIMEOUT, check=False
    )


def test_a_missing_prompt_is_caught_before_the_separator() -> None:
    """`acp2 run -- acp2 test-agent`: the agent command is never taken as the prompt."""
    argv = [sys.executable, "-m", "acp2.cli.main", "run", "--", *AGENT]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=RUN_TIMEOUT, check=False)
    assert done.returncode == 2
    assert "missing PROMPT" in done.stderr
    assert "No such file" not in done.stderr


def test_a_dash_prompt_is_read_from_stdin() -> None:
    done = acp2_run_input("-", stdin="echo read from stdin\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "read from stdin\n"


def test_ask_shows_what_is_asked_and_takes_a_letter_from_a_pipe() -> None:
    """Off a terminal the answer is a line; the wording and keys are the chat's."""
    done = acp2_run_input("--permission", "ask", "tools", stdin="y\n")
    assert done.returncode == 0, done.stderr
    assert "[permission] Allow editing hello.txt?" in done.stderr
    assert '"path":' in done.stderr  # the raw input is always shown
    assert "[y] Allow once  [a] Always allow  [n] Reject  [4] Always reject" in done.stderr
    assert "choose [y/a/n, 1-4]:" in done.stderr
    assert "-> allowed: Allow once" in done.stderr
    assert done.stdout.strip() == "Edited hello.txt."


def test_run_json_includes_each_permission_request_and_its_answer() -> None:
    done = acp2_run("--json", "--permission", "deny", "tools")
    assert done.returncode == 0, done.stderr
    lines = json_lines(done.stdout)
    asked = [line for line in lines if "permissionRequest" in line]
    answered = [line for line in lines if "permissionResponse" in line]
    assert len(asked) == len(answered) == 1
    request = asked[0]["permissionRequest"]
    assert isinstance(request, dict)
    assert request["title"] == "Allow editing hello.txt?"
    assert answered[0] == {
        "permissionResponse": {"outcome": {"outcome": "selected", "optionId": "reject_once"}},
        "n": 1,
    }
    assert lines.index(asked[0]) < lines.index(answered[0]) < len(lines) - 1


def spawn_run(*args: str) -> Any:
    """``acp2 run ARGS -- AGENT`` in an 80x24 pseudo-terminal (pexpect)."""
    pexpect = pytest.importorskip("pexpect")
    env = {**os.environ, "TERM": "xterm-256color", "PROMPT_TOOLKIT_NO_CPR": "1"}
    argv = ["-m", "acp2.cli.main", "run", *args, "--", *AGENT]
    return pexpect.spawn(
        sys.executable, argv, env=env, dimensions=(24, 80), encoding="utf-8", timeout=15
    )


def test_run_streams_the_reply_on_a_terminal_before_the_work_ends() -> None:
    """On a terminal the text shows while the agent still works (here: until cancelled)."""
    child = spawn_run("--cancel-after", "30", "wait")
    try:
        child.expect("Waiting until cancelled...")
        assert child.isalive()  # the work is still running: the text was streamed
    finally:
        child.terminate(force=True)


def test_run_ask_on_a_terminal_takes_one_key() -> None:
    pexpect = pytest.importorskip("pexpect")
    child = spawn_run("--permission", "ask", "tools")
    try:
        child.expect("Allow editing hello.txt\\?")
        child.expect("Always reject")
        child.send("y")
        child.expect("allowed: Allow once")
        child.expect("Edited hello.txt.")
        child.expect(pexpect.EOF)
    finally:
        child.terminate(force=True)
    child.close()
    assert child.exitstatus == 0


NEWER_V2 = [sys.executable, str(Path(__file__).with_name("newer_v2_agent.py"))]


def test_run_debug_names_every_field_the_client_decoded_away_and_the_unhandled_notification() -> (
    None
):
    """Fault 5: what a newer v2 agent sends that acp2 does not model is logged, once."""
    done = acp2_run("--debug", "hello", agent=NEWER_V2)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "hi\n"
    logged = [line.split(" DEBUG: ", 1)[-1] for line in done.stderr.splitlines()]
    ignored = "ignored fields acp2 does not model"
    assert (
        f"agent: initialize: {ignored}: ['capabilities.session.futureThing', "
        "'capabilities.experimentalX']"
    ) in logged
    assert f"agent: session/new: {ignored}: ['titleX']" in logged
    assert (
        f"agent: session/update: {ignored}: ['update.usage.reasoningTokensX', 'update.turnCostX']"
    ) in logged
    assert "agent: no handler for notification _auth/status_update" in logged


def test_run_without_debug_says_nothing_about_ignored_fields() -> None:
    done = acp2_run("hello", agent=NEWER_V2)
    assert done.returncode == 0, done.stderr
    assert "ignored fields" not in done.stderr

"""The errors a user meets in the first hour, end to end: ``acp2 run``, ``acp2 chat``
(plain mode) and ``acp2 check`` started as real processes against agents that cannot
start, exit at once, or print on stdout. Each message names the problem and what to do
next, and no traceback is shown."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import ACP2, isolated_env

from helpers import timeouts

PY = sys.executable
#: Each subcommand with its arguments before the agent, and its exit status on failure.
COMMANDS = {
    "run": (["run", "hello"], 3),
    "chat": (["chat", "--plain"], 3),
    "check": (["check", "--plain", "--timeout", "2"], 2),
}
EXITS_AT_ONCE = ["sh", "-c", "echo 'fatal: no API key set' >&2; exit 3"]
PRINTS_HELLO = [PY, "-c", "import time; print('hello', flush=True); time.sleep(30)"]


def acp2(
    command: str, agent: list[str], tmp_path: Path, *extra: str
) -> subprocess.CompletedProcess[str]:
    """Run ``acp2 COMMAND EXTRA... -- AGENT`` (stdin: one prompt line for chat); bounded."""
    args, _ = COMMANDS[command]
    return subprocess.run(
        [*ACP2, *args[:1], *extra, *args[1:], "--", *agent],
        input="hello\n",
        capture_output=True,
        text=True,
        env=isolated_env(tmp_path / "data"),
        cwd=tmp_path,
        timeout=timeouts.RUN_TIMEOUT,
        check=False,
    )


def assert_clean_failure(done: subprocess.CompletedProcess[str], command: str) -> None:
    """The expected exit status, no traceback, no escape sequence."""
    assert done.returncode == COMMANDS[command][1], done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    assert "\x1b" not in done.stderr + done.stdout


@pytest.mark.parametrize("command", COMMANDS)
def test_an_agent_command_that_is_not_on_path_says_command_not_found_and_suggests_launchers(
    command: str, tmp_path: Path
) -> None:
    done = acp2(command, ["acp2-no-such-agent", "--acp"], tmp_path)
    assert_clean_failure(done, command)
    out = done.stdout + done.stderr
    assert "command not found: acp2-no-such-agent" in out
    assert "`npx acp2-no-such-agent --acp`" in out
    assert "`uvx acp2-no-such-agent --acp`" in out


@pytest.mark.parametrize("command", COMMANDS)
def test_a_scoped_npm_package_name_gets_an_npx_hint(command: str, tmp_path: Path) -> None:
    done = acp2(command, ["@acp2-test/no-such-agent"], tmp_path)
    assert_clean_failure(done, command)
    out = done.stdout + done.stderr
    assert "command not found: @acp2-test/no-such-agent" in out
    assert "try `npx @acp2-test/no-such-agent`" in out


@pytest.mark.parametrize("command", COMMANDS)
def test_a_missing_file_path_says_command_not_found_and_to_check_the_path(
    command: str, tmp_path: Path
) -> None:
    done = acp2(command, ["./no-such-agent.py"], tmp_path)
    assert_clean_failure(done, command)
    assert "command not found: ./no-such-agent.py (no such file" in done.stdout + done.stderr


@pytest.mark.parametrize("command", COMMANDS)
def test_an_agent_that_exits_at_once_reports_its_status_and_stderr_tail(
    command: str, tmp_path: Path
) -> None:
    done = acp2(command, EXITS_AT_ONCE, tmp_path)
    assert_clean_failure(done, command)
    out = done.stdout + done.stderr
    assert "the agent exited with status 3 before answering initialize" in out
    assert "fatal: no API key set" in out
    assert "run the agent by itself: sh -c" in out


@pytest.mark.parametrize("command", COMMANDS)
def test_an_agent_printing_on_stdout_gets_its_first_line_quoted(
    command: str, tmp_path: Path
) -> None:
    """It then stays silent: the error comes after a short grace, not the full timeout."""
    done = acp2(command, PRINTS_HELLO, tmp_path)
    assert_clean_failure(done, command)
    out = done.stdout + done.stderr
    assert "not JSON on stdout: 'hello'" in out
    assert "stdout must carry only ACP messages" in out
    assert "a stray print is the usual cause" in out


@pytest.mark.parametrize("command", ["run", "chat"])
def test_the_agents_text_is_quoted_without_control_characters(command: str, tmp_path: Path) -> None:
    """Escape sequences on the agent's stdout or stderr never reach our terminal."""
    script = (
        "import sys; print('\\x1b]0;pwned\\x07\\x1b[2Jhi\\x1b[31m' + 'x' * 500);"
        "sys.stderr.write('\\x1b[31mred alert\\x1b[0m\\n'); sys.exit(1)"
    )
    done = acp2(command, [PY, "-c", script], tmp_path)
    assert_clean_failure(done, command)
    out = done.stdout + done.stderr
    assert "red alert" in out
    assert "'hi" + "x" * 198 + "…'" in out  # cut to 200 characters


def test_an_agent_printing_a_banner_before_speaking_acp_still_works(tmp_path: Path) -> None:
    banner = f"echo 'Starting agent v1.0'; exec {PY} -m acp2 test-agent"
    done = acp2("run", ["sh", "-c", banner], tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "hello\n"


def test_a_missing_working_directory_is_named_as_a_usage_error(tmp_path: Path) -> None:
    missing = tmp_path / "gone"
    done = acp2("run", [PY, "-m", "acp2", "test-agent"], tmp_path, "--cwd", str(missing))
    assert done.returncode == 2, done.stderr  # found before the agent starts
    assert f"--cwd: {missing} does not exist (give an existing folder)" in done.stderr

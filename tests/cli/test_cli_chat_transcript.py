"""``acp2 chat`` without a terminal: prompts on stdin, a plain transcript on stdout."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import TEST_AGENT, isolated_env, run_acp2

from helpers import timeouts


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return isolated_env(tmp_path / "data")


def chat(
    stdin: str, *options: str, env: dict[str, str], cwd: Path, agent: list[str] | None = None
) -> tuple[int, str, str]:
    done = run_acp2("chat", *options, "--", *(agent or TEST_AGENT), stdin=stdin, env=env, cwd=cwd)
    return done.returncode, done.stdout, done.stderr


def test_prompts_are_read_line_by_line_and_the_replies_printed(
    env: dict[str, str], tmp_path: Path
) -> None:
    status, out, err = chat("echo hello from a pipe\nthink about it\n", env=env, cwd=tmp_path)
    assert status == 0, err
    lines = out.splitlines()
    assert lines[0] == "connected to acp2 test agent 1"
    assert re.fullmatch(r"session sess_\w+ \(.+\)", lines[1])
    assert lines[2:5] == ["> echo hello from a pipe", "hello from a pipe", "[stop: end_turn]"]
    assert lines[5:] == [
        "> think about it",
        "(thinking) about it",
        "Done thinking.",
        "[stop: end_turn]",
    ]
    assert "\x1b[" not in out  # plain text: no colours, no cursor movement


def test_the_transcript_shows_plans_tool_calls_diffs_terminals_and_usage(
    env: dict[str, str], tmp_path: Path
) -> None:
    status, out, err = chat("all\n", "--permission", "allow", env=env, cwd=tmp_path)
    assert status == 0, err
    for expected in (
        "(thinking) considering",
        "[plan]",
        "  [x] Make the change",
        "[edit] Edit hello.txt (completed)",
        "    +hello, world",
        "    $ cat hello.txt",
        "    hello, world",
        "    [exit 0]",
        "usage: ctx 1.2k/200k (1%) · $0.01",
        "[stop: end_turn]",
    ):
        assert expected in out.splitlines(), expected


def test_permission_defaults_to_deny_without_a_terminal(
    env: dict[str, str], tmp_path: Path
) -> None:
    status, out, _ = chat("tools\n", env=env, cwd=tmp_path)
    assert status == 0
    assert "[permission] Allow editing hello.txt? -> rejected: Reject" in out
    assert "Permission denied; nothing was changed." in out


def test_permission_ask_reads_the_answer_from_the_next_line(
    env: dict[str, str], tmp_path: Path
) -> None:
    status, out, _ = chat("tools\n1\n", "--permission", "ask", env=env, cwd=tmp_path)
    assert status == 0
    assert "  [y] Allow once  [a] Always allow  [n] Reject  [4] Always reject" in out
    assert "  -> allowed: Allow once" in out
    assert "Edited hello.txt." in out


def test_the_exit_status_is_1_when_a_turn_did_not_end_with_end_turn(
    env: dict[str, str], tmp_path: Path
) -> None:
    status, out, _ = chat("echo ok\nstop max_tokens\n", env=env, cwd=tmp_path)
    assert status == 1
    assert out.splitlines()[-1] == "[stop: max_tokens]"


def test_resume_replays_the_history_then_continues(env: dict[str, str], tmp_path: Path) -> None:
    agent = [*TEST_AGENT, "--store", str(tmp_path / "sessions.sqlite3")]
    status, out, _ = chat("echo first words\n", env=env, cwd=tmp_path, agent=agent)
    assert status == 0
    session_id = re.search(r"session (sess_\w+)", out)
    assert session_id is not None
    status, out, err = chat(
        "echo second words\n", "--resume", session_id[1], env=env, cwd=tmp_path, agent=agent
    )
    assert status == 0, err
    lines = out.splitlines()
    start = lines.index("> echo first words")
    assert lines[start:] == [
        "> echo first words",
        "first words",
        "--- resumed ---",
        "> echo second words",
        "second words",
        "[stop: end_turn]",
    ]


def test_an_agent_that_cannot_start_exits_3(env: dict[str, str], tmp_path: Path) -> None:
    status, out, _ = chat("hi\n", env=env, cwd=tmp_path, agent=[str(tmp_path / "no-such-agent")])
    assert status == 3
    assert "[error]" in out


def test_a_missing_agent_command_is_a_usage_error(env: dict[str, str], tmp_path: Path) -> None:
    done = run_acp2("chat", stdin="", env=env, cwd=tmp_path)
    assert done.returncode == 2
    assert "missing AGENT_COMMAND" in done.stderr


def test_an_agent_that_dies_mid_turn_exits_3_after_showing_what_it_said(
    env: dict[str, str], tmp_path: Path
) -> None:
    # The agent is killed as soon as it has said it is waiting (not after a fixed time,
    # which a loaded machine may spend starting it).
    dying = [sys.executable, "-c", KILL_WHEN_WAITING, *TEST_AGENT]
    status, out, _ = chat("wait\n", env=env, cwd=tmp_path, agent=dying)
    assert status == 3
    lines = out.splitlines()
    assert lines[-2] == "Waiting until cancelled..."
    assert lines[-1].startswith("[error] The agent closed the connection")


#: Runs the agent given as arguments, passing its stdout on, and kills it (and exits
#: without a word) once it has written the ``wait`` scenario's message.
KILL_WHEN_WAITING = """
import subprocess, sys
child = subprocess.Popen(sys.argv[1:], stdout=subprocess.PIPE)
for line in child.stdout:
    sys.stdout.buffer.write(line)
    sys.stdout.buffer.flush()
    if b"Waiting until cancelled" in line:
        child.kill()
        break
"""


BLOCK_CLI_EXTRA = """
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in ("rich", "prompt_toolkit"):
            raise ImportError(f"blocked {name}", name=name)
sys.meta_path.insert(0, Block())
from acp2.cli.main import main
sys.exit(main(sys.argv[1:]))
"""


def test_the_transcript_needs_neither_rich_nor_prompt_toolkit(
    env: dict[str, str], tmp_path: Path
) -> None:
    """They are the optional `cli` extra; plain mode works without them."""
    done = subprocess.run(
        [sys.executable, "-c", BLOCK_CLI_EXTRA, "chat", "--", *TEST_AGENT],
        input="tools\n",
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=timeouts.RUN_TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "[edit] Edit hello.txt (failed)" in done.stdout

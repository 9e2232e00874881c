"""``acp2 chat`` and ``acp2 demo`` used as a person would: in a pseudo-terminal (pexpect),
80 columns wide, typing prompts, answering a permission prompt, pressing Ctrl-C / Ctrl-D."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_helpers import ACP2, TEST_AGENT

from helpers import timeouts
from helpers.processes import spawn_pty, terminal_env

pexpect = pytest.importorskip("pexpect")


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return terminal_env(tmp_path / "data")


def spawn(args: list[str], env: dict[str, str], cwd: Path) -> pexpect.spawn:
    """Start ``acp2 ARGS`` in an 80x24 pseudo-terminal."""
    child: pexpect.spawn = spawn_pty([*ACP2, *args], env=env, cwd=cwd)
    return child


@pytest.fixture
def chat(env: dict[str, str], tmp_path: Path) -> Iterator[pexpect.spawn]:
    child = spawn(["chat", "--", *TEST_AGENT], env, tmp_path)
    child.logfile_read = open(tmp_path / "pty.log", "w")  # noqa: SIM115
    child.expect("connected to acp2 test agent")
    child.expect("❯")
    yield child
    if child.isalive():
        child.terminate(force=True)


def quit_with_ctrl_d(child: pexpect.spawn) -> int:
    """Press Ctrl-D at the prompt; return the exit status."""
    child.sendcontrol("d")
    child.expect(pexpect.EOF)
    child.close()
    return int(child.exitstatus)


def test_typing_a_prompt_shows_the_reply_and_ctrl_d_exits(chat: pexpect.spawn) -> None:
    chat.sendline("echo hello from a person")
    chat.expect("hello from a person")
    chat.expect("✓ end_turn")
    chat.expect("❯")
    assert quit_with_ctrl_d(chat) == 0


def test_a_permission_prompt_is_answered_with_one_key(chat: pexpect.spawn) -> None:
    chat.sendline("tools")
    chat.expect("permission requested")
    chat.expect("Allow editing hello.txt\\?")
    chat.expect("choose")
    chat.expect("Always reject")
    chat.expect("waiting for you")  # the status line stays under the question
    chat.send("1")
    chat.expect("allowed: Allow once")
    chat.expect("hello, world")  # the diff and the terminal output
    chat.expect("Edited hello.txt.")
    chat.expect("✓ end_turn")
    assert quit_with_ctrl_d(chat) == 0


def test_ctrl_c_cancels_the_running_work(chat: pexpect.spawn) -> None:
    chat.sendline("wait")
    chat.expect("Waiting until cancelled")
    chat.expect("ctrl-c to cancel")
    chat.sendcontrol("c")
    chat.expect("⊘ cancelled")
    chat.expect("❯")
    chat.sendline("echo still here")
    chat.expect("still here")
    chat.expect("✓ end_turn")
    assert quit_with_ctrl_d(chat) == 0


def test_ctrl_c_on_an_empty_prompt_asks_first_and_a_second_one_exits(
    chat: pexpect.spawn,
) -> None:
    chat.sendcontrol("c")
    chat.expect("press ctrl-c again to exit")
    chat.expect("❯")
    chat.sendcontrol("c")
    chat.expect("no resume command")  # the test agent keeps its sessions in memory
    chat.expect(pexpect.EOF)
    chat.close()
    assert chat.exitstatus == 0


def test_slash_offers_the_agents_commands(chat: pexpect.spawn) -> None:
    chat.send("/ec")
    chat.expect("Echo the input")
    chat.send("\t")
    chat.send("completed\r")
    chat.expect("completed")
    chat.expect("✓ end_turn")
    assert quit_with_ctrl_d(chat) == 0


def test_prompts_are_kept_in_the_history_file(chat: pexpect.spawn, tmp_path: Path) -> None:
    chat.sendline("echo remember me")
    chat.expect("✓ end_turn")
    assert quit_with_ctrl_d(chat) == 0
    (history,) = (tmp_path / "data" / "history").iterdir()
    assert "echo remember me" in history.read_text()


def test_the_demo_fixes_the_sample_project_interactively(
    env: dict[str, str], tmp_path: Path
) -> None:
    """Enter accepts the suggested prompt; y answers both permission prompts."""
    project = tmp_path / "project"
    child = spawn(["demo", "--dir", str(project), "--pace", "0"], env, tmp_path)
    child.expect("sample project copied to")
    child.expect("fix the failing test")  # pre-filled at the prompt
    child.send("\r")
    for _ in range(2):
        child.expect("permission requested")
        child.expect("choose")
        child.send("y")
    child.expect("Ran 6 tests")
    child.expect("✓ end_turn")
    child.expect("❯")
    assert quit_with_ctrl_d(child) == 0
    done = subprocess.run(
        [sys.executable, "-m", "unittest"],
        cwd=project,
        capture_output=True,
        timeout=timeouts.RUN_TIMEOUT,
        check=False,
    )
    assert done.returncode == 0


def test_ctrl_c_at_a_permission_prompt_declines_and_cancels_the_turn(chat: pexpect.spawn) -> None:
    chat.sendline("tools")
    chat.expect("choose")
    chat.sendcontrol("c")
    chat.expect("declined")
    chat.expect("⊘ cancelled")
    chat.expect("❯")
    chat.sendline("echo next")
    chat.expect("next")
    chat.expect("✓ end_turn")
    assert quit_with_ctrl_d(chat) == 0


def test_ctrl_c_still_cancels_after_a_permission_prompt_was_answered(
    env: dict[str, str], tmp_path: Path
) -> None:
    """The permission prompt must not take the turn's Ctrl-C handling away."""
    project = tmp_path / "project"
    child = spawn(["demo", "--dir", str(project), "--pace", "0.05"], env, tmp_path)
    child.expect("fix the failing test")
    child.send("\r")
    child.expect("choose")
    child.send("y")
    child.expect("allowed")
    child.expect("The fix")  # the agent streams on, no prompt open
    child.sendcontrol("c")
    child.expect("⊘ cancelled")
    child.expect("❯")
    assert quit_with_ctrl_d(child) == 0

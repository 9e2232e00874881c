"""``acp2 chat`` and ``acp2 run`` off the happy path, in a pseudo-terminal (pexpect): what a
person sees when they answer, interrupt or mistype (issue 29, round 3)."""

from __future__ import annotations

import contextlib
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_helpers import ACP2, TEST_AGENT
from pty_helpers import CHAT_AGENT, leave, pty_env, spawn_chat

from acp2.ui.style import strip_ansi
from helpers.serve_process import listening_port
from helpers.timeouts import PROCESS_TIMEOUT

pexpect = pytest.importorskip("pexpect")


@contextlib.contextmanager
def served_command(agent: list[str], env: dict[str, str], cwd: Path) -> Iterator[str]:
    """``acp2 serve --port 0 -- AGENT`` (one agent process per connection); its URL."""
    argv = [*ACP2, "serve", "--no-token", "--port", "0", "--", *agent]
    server = subprocess.Popen(argv, stderr=subprocess.PIPE, text=True, env=env, cwd=cwd)
    try:
        yield f"http://127.0.0.1:{listening_port(server, [])}/acp"
    finally:
        server.terminate()
        server.wait(PROCESS_TIMEOUT)


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


def test_leaving_a_chat_with_an_in_memory_agent_prints_why_there_is_no_resume(
    tmp_path: Path,
) -> None:
    """The test agent's default store is in memory: a resume command would fail."""
    child = spawn_chat(
        ["chat", "--", *TEST_AGENT], pty_env(tmp_path / "data"), tmp_path, tmp_path / "pty.log"
    )
    child.expect("❯")
    status, tail = leave(child)
    assert status == 0
    assert "no resume command: this agent keeps its sessions in memory only" in tail
    assert "resume this session with" not in tail


def test_leaving_a_chat_with_a_stored_agent_still_prints_the_resume_command(
    tmp_path: Path,
) -> None:
    store = tmp_path / "sessions.db"
    args = ["chat", "--", *TEST_AGENT, "--store", str(store)]
    child = spawn_chat(args, pty_env(tmp_path / "data"), tmp_path, tmp_path / "pty.log")
    child.expect("❯")
    status, tail = leave(child)
    assert status == 0
    assert "resume this session with" in tail
    assert "--resume" in tail
    assert "no resume command" not in tail


def test_info_on_a_served_stdio_agent_does_not_suggest_attaching(tmp_path: Path) -> None:
    """``acp2 serve -- AGENT`` runs one agent process per connection: no --attach line."""
    env = pty_env(tmp_path / "data")
    with served_command([*TEST_AGENT], env, tmp_path) as url:
        child = spawn_chat(["chat", "--url", url], env, tmp_path, tmp_path / "pty.log")
        child.expect("❯")
        child.sendline("/info")
        child.expect("no other terminal can watch: this agent does not offer attaching")
        status, tail = leave(child)
    assert status == 0
    assert "--attach" not in tail


def test_the_chat_says_it_is_starting_the_agent_before_it_answers(tmp_path: Path) -> None:
    child = spawn_chat(
        ["chat", "--", *TEST_AGENT], pty_env(tmp_path / "data"), tmp_path, tmp_path / "pty.log"
    )
    child.expect("starting ")
    child.expect("test-agent…")
    child.expect("connected to acp2 test agent")
    child.expect("❯")
    assert leave(child)[0] == 0


def test_an_agent_crash_is_followed_by_the_resume_command(tmp_path: Path) -> None:
    """The session is in the agent's SQLite file: resuming it after the crash works."""
    agent = [*CHAT_AGENT, str(tmp_path / "sessions.db")]
    child = spawn_chat(
        ["chat", "--", *agent], pty_env(tmp_path / "data"), tmp_path, tmp_path / "pty.log"
    )
    child.expect("❯")
    child.sendline("crash")
    child.expect("error:")
    child.expect("resume this session with")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 3


def test_help_shows_one_line_per_agent_command_and_help_name_shows_it_whole(
    tmp_path: Path,
) -> None:
    child = spawn_chat(
        ["chat", "--", *CHAT_AGENT], pty_env(tmp_path / "data"), tmp_path, tmp_path / "pty.log"
    )
    child.expect("❯")
    child.sendline("/help")
    child.expect("Write release notes. …")
    child.expect("/help NAME shows one command in full")
    assert "SECOND LINE" not in str(child.before)
    child.expect("❯")
    child.sendline("/help skill")
    child.expect("SECOND LINE of the skill")
    child.expect("❯")
    assert leave(child)[0] == 0


def test_a_single_newline_in_the_agents_text_stays_a_line_break(tmp_path: Path) -> None:
    child = spawn_chat(
        ["chat", "--", *TEST_AGENT], pty_env(tmp_path / "data"), tmp_path, tmp_path / "pty.log"
    )
    child.expect("❯")
    child.send("echo first line")
    child.send("\x1b\r")  # esc-enter: a newline in the prompt
    child.send("second line\r")
    child.expect("✓ end_turn")
    assert leave(child)[0] == 0
    drawn = (tmp_path / "pty.log").read_text()
    assert "first line second line" not in drawn  # not joined into one paragraph
    assert re.search(r"first line\s*\r?\n[^\n]*second line", drawn)


def test_a_command_permission_box_names_the_command_in_the_title_and_once_more(
    tmp_path: Path,
) -> None:
    """Title and ``$ command``: not again as a tool header and in the raw input."""
    args = ["demo", "--dir", str(tmp_path / "project"), "--pace", "0"]
    child = spawn_chat(args, pty_env(tmp_path / "data"), tmp_path, tmp_path / "pty.log")
    child.expect("fix the failing test")
    child.send("\r")
    child.expect("choose")
    child.send("y")  # the edit
    child.expect("permission requested")
    child.expect("choose")
    box = strip_ansi(str(child.before))
    assert box.count("unittest -v") == 2, box
    assert "raw input" not in box
    child.send("y")
    child.expect("✓ end_turn")
    assert leave(child)[0] == 0


def test_run_on_a_terminal_lists_the_permission_choices_once(tmp_path: Path) -> None:
    child = spawn_chat(
        ["run", "tools", "--", *TEST_AGENT], pty_env(tmp_path / "data"), tmp_path,
        tmp_path / "pty.log",
    )  # fmt: skip
    child.expect("ctrl-c cancels the turn")
    child.send("y")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    drawn = strip_ansi((tmp_path / "pty.log").read_text())
    assert drawn.count("Always reject") == 1, drawn


def test_esc_interrupts_the_running_turn_and_the_chat_goes_on(tmp_path: Path) -> None:
    child = spawn_chat(
        ["chat", "--", *TEST_AGENT], pty_env(tmp_path / "data"), tmp_path, tmp_path / "pty.log"
    )
    child.expect("❯")
    child.sendline("wait")
    child.expect("Waiting until cancelled")
    child.expect(r" · [1-9][0-9]*\.[0-9]s")  # the live region is up: the chat reads keys
    child.send("\x1b")
    child.expect("⊘ cancelled")
    child.expect("❯")
    child.sendline("echo still here")
    child.expect("still here")
    child.expect("✓ end_turn")
    assert leave(child)[0] == 0


def test_a_bang_command_runs_here_shows_its_output_sanitized_and_goes_with_the_next_prompt(
    tmp_path: Path,
) -> None:
    child = spawn_chat(
        ["chat", "--", *CHAT_AGENT], pty_env(tmp_path / "data"), tmp_path, tmp_path / "pty.log"
    )
    child.expect("❯")
    child.sendline(r"!printf 'local \033]0;evil\007output\n'; pwd; exit 3")
    child.expect("local")
    child.expect(str(tmp_path))  # ran in the session folder
    child.expect(r"\[exit 3\]")
    child.expect("this output goes with your next prompt")
    child.expect("❯")
    before_prompt = (tmp_path / "pty.log").read_text()
    assert "end_turn" not in before_prompt  # nothing was sent to the agent
    assert "\x1b]0;evil" not in before_prompt  # the command's escape never reached the screen
    child.sendline("what failed?")
    child.expect("echo: I ran")  # the agent got the command and its output with the prompt
    child.expect("local output")
    child.expect("what failed")
    child.expect("✓ end_turn")
    assert leave(child)[0] == 0


def test_ctrl_c_stops_a_bang_command_and_the_chat_goes_on(tmp_path: Path) -> None:
    child = spawn_chat(
        ["chat", "--", *CHAT_AGENT], pty_env(tmp_path / "data"), tmp_path, tmp_path / "pty.log"
    )
    child.expect("❯")
    child.sendline("!echo started; sleep 60")
    child.expect("ctrl-c stops it")
    child.sendcontrol("c")
    child.expect("stopped: nothing goes with the next prompt")
    child.expect("❯")
    assert leave(child)[0] == 0

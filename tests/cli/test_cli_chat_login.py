"""``acp2 chat`` and an agent that needs a terminal login (AU-05, AU-06), in a
pseudo-terminal: the session is refused with -32000, the chat offers the agent's login,
runs it in the terminal, starts the agent again and chats."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import ACP2
from pty_helpers import spawn_chat

from helpers import timeouts
from helpers.processes import terminal_env

pexpect = pytest.importorskip("pexpect")

LOGIN_AGENT = [sys.executable, str(Path(__file__).with_name("login_agent.py"))]


def env_for(tmp_path: Path, **extra: str) -> dict[str, str]:
    return terminal_env(tmp_path / "data") | {
        "ACP2_LOGIN_MARKER": str(tmp_path / "logged-in"),
        **extra,
    }


def test_au06_chat_runs_the_terminal_login_then_reconnects_and_chats(tmp_path: Path) -> None:
    child = spawn_chat(["chat", "--", *LOGIN_AGENT], env_for(tmp_path), tmp_path, tmp_path / "log")
    child.expect("the agent needs you to log in")
    child.expect("Log in in a terminal")
    child.expect("--login")
    child.expect(r"log in with \[1-1")
    child.sendline("1")
    child.expect("login done")
    child.expect("starting the agent again")
    child.expect("connected to acp2 test agent")
    child.expect("❯")
    child.sendline("echo after login")
    child.expect("after login")
    child.expect("✓ end_turn")
    child.expect("❯")
    child.sendcontrol("d")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert (tmp_path / "logged-in").exists()


def test_a_failed_login_ends_the_chat_with_the_agents_refusal(tmp_path: Path) -> None:
    env = env_for(tmp_path, ACP2_LOGIN_FAIL="1")
    child = spawn_chat(["chat", "--", *LOGIN_AGENT], env, tmp_path, tmp_path / "log")
    child.expect(r"log in with \[1-1")
    child.sendline("1")
    child.expect("login failed")
    child.expect("the login did not succeed")
    child.expect("Authentication required")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 3
    assert not (tmp_path / "logged-in").exists()


def test_declining_the_login_runs_nothing(tmp_path: Path) -> None:
    child = spawn_chat(["chat", "--", *LOGIN_AGENT], env_for(tmp_path), tmp_path, tmp_path / "log")
    child.expect(r"log in with \[1-1")
    child.sendline("")
    child.expect("Authentication required")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 3
    assert not (tmp_path / "logged-in").exists()


def test_au05_without_a_terminal_no_terminal_login_is_asked_for(tmp_path: Path) -> None:
    done = subprocess.run(
        [*ACP2, "chat", "--", *LOGIN_AGENT],
        input="hello\n",
        capture_output=True,
        text=True,
        env=env_for(tmp_path),
        cwd=tmp_path,
        timeout=timeouts.PROCESS_TIMEOUT * 4,
        check=False,
    )
    assert done.returncode == 3
    assert "Authentication required" in done.stdout + done.stderr
    assert "--login" not in done.stdout + done.stderr  # not advertised: no auth.terminal

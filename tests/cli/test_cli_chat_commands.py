"""``acp2 chat``'s own slash commands, the status bar and leaving, used as a person would:
in a pseudo-terminal, against the chat test agent (tests/cli/chat_agent.py) or
``acp2 test-agent`` with a session store."""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import ACP2, TEST_AGENT
from pty_helpers import CHAT_AGENT, leave, pty_env, shown, spawn_chat, wait_idle

from acp2.ui.style import strip_ansi as plain

pexpect = pytest.importorskip("pexpect")


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return pty_env(tmp_path / "data")


@pytest.fixture
def chat(env: dict[str, str], tmp_path: Path) -> Iterator[Any]:
    child = spawn_chat(["chat", "--", *CHAT_AGENT], env, tmp_path, tmp_path / "pty.log")
    child.expect("connected to chat test agent")
    child.expect("❯")
    yield child
    if child.isalive():
        child.terminate(force=True)


def test_help_lists_the_commands_and_never_reaches_the_agent(chat: Any) -> None:
    chat.sendline("/help")
    chat.expect("/sessions")
    chat.expect("/model")  # the agent offers a model option
    chat.expect("//help")  # the agent's own help, behind the built-in
    chat.expect("The agent's own help")
    chat.expect("/deploy")
    chat.expect("keys")
    chat.expect("❯")
    assert "end_turn" not in chat.before
    chat.sendline("//help")  # the agent's command of the same name
    chat.expect("agent help ran")
    wait_idle(chat)
    assert leave(chat)[0] == 0


def test_an_unknown_slash_word_is_refused_locally(chat: Any) -> None:
    chat.sendline("/nonsense")
    chat.expect("unknown command /nonsense")
    chat.expect("❯")
    assert "end_turn" not in chat.before
    assert leave(chat)[0] == 0


def test_slash_completion_offers_built_ins_and_the_agents_commands(chat: Any) -> None:
    chat.send("/de")
    chat.expect(shown("Deploy the app"))
    chat.send("\x15/cl")
    chat.expect(shown("start a new session"))
    chat.send("\x15")
    assert leave(chat)[0] == 0


def test_model_lists_the_choices_and_sets_one(chat: Any) -> None:
    chat.sendline("/model")
    chat.expect("Small Model")
    chat.expect("Large Model")
    chat.expect("model\\? \\[1-2")
    chat.sendline("2")
    chat.expect("model: Large Model")
    chat.sendline("show")
    chat.expect("model=large")
    wait_idle(chat)
    chat.sendline("/mode code")
    chat.expect("mode: Just code")
    assert leave(chat)[0] == 0


def test_cost_reports_the_usage_and_cost_the_agent_sent(chat: Any) -> None:
    chat.sendline("/cost")
    chat.expect("has not reported usage")
    chat.sendline("status Fixing the parser")
    chat.expect("status set")
    wait_idle(chat)
    chat.sendline("/cost")
    chat.expect("context 1.5k of 100k tokens \\(2%\\) · cost \\$0.25")
    assert leave(chat)[0] == 0


def test_clear_starts_a_new_session_and_the_hint_names_it(
    env: dict[str, str], tmp_path: Path
) -> None:
    agent = [*CHAT_AGENT, str(tmp_path / "sessions.db")]  # stored: a resume can work
    chat = spawn_chat(["chat", "--", *agent], env, tmp_path, tmp_path / "pty.log")
    chat.expect("❯")
    first = re.search(r"session (sess_\w+)", (tmp_path / "pty.log").read_text())
    assert first is not None
    chat.sendline("/clear")
    chat.expect("new session (sess_\\w+)")
    second = chat.match.group(1)
    assert second != first.group(1)
    chat.expect("❯")
    status, tail = leave(chat)
    assert status == 0
    assert f"--resume {second} --" in tail


def test_cancel_typed_while_the_agent_works_cancels_at_once(
    env: dict[str, str], tmp_path: Path
) -> None:
    child = spawn_chat(["chat", "--", *TEST_AGENT], env, tmp_path, tmp_path / "pty.log")
    child.expect("❯")
    child.sendline("wait")
    child.expect("ctrl-c to cancel")
    child.send("/cancel\r")
    child.expect("⊘ cancelled")
    child.expect("❯")
    assert leave(child)[0] == 0


def test_leaving_prints_the_resume_command_and_it_resumes_the_session(
    env: dict[str, str], tmp_path: Path
) -> None:
    store = tmp_path / "sessions.db"
    agent = [*CHAT_AGENT, str(store)]
    child = spawn_chat(["chat", "--", *agent], env, tmp_path, tmp_path / "pty.log")
    child.expect("❯")
    child.sendline("remember the walrus")
    child.expect("echo: remember the walrus")
    wait_idle(child)
    status, tail = leave(child)
    assert status == 0
    found = re.search(r"resume this session with: (acp2 chat --resume \S+ -- .*)", plain(tail))
    assert found is not None, tail
    args = shlex.split(found.group(1).strip())
    assert args[4:] == ["--", *agent]
    again = spawn_chat([*args[1:]], env, tmp_path, tmp_path / "pty2.log")
    again.expect("── resumed ──")
    assert "remember the walrus" in again.before
    again.expect("❯")
    assert leave(again)[0] == 0
    assert ACP2  # the hint names `acp2`; the test runs it as python -m acp2


#: A numbered row of the session list whose title is the first prompt (colours between).
FIRST_ROW = re.compile(r"(\d)\s+(?:\x1b\[[0-9;]*m)*echo the first conversation")


def test_sessions_lists_this_folders_sessions_by_title_and_age_and_resumes_the_pick(
    env: dict[str, str], tmp_path: Path
) -> None:
    store = tmp_path / "sessions.db"
    agent = [*TEST_AGENT, "--store", str(store)]
    child = spawn_chat(["chat", "--", *agent], env, tmp_path, tmp_path / "pty.log")
    child.expect("❯")
    child.sendline("echo the first conversation")
    wait_idle(child)
    child.sendline("/clear")
    child.expect("new session")
    child.expect("❯")
    child.sendline("/resume")  # without an id: the same list as /sessions
    child.expect("\\(this session\\)")
    child.expect("resume which\\? \\[1-2")
    before = child.before
    assert "just now" in before
    found = FIRST_ROW.search(before)
    assert found is not None, before
    child.sendline(found.group(1))
    child.expect("── resumed ──")
    assert "the first conversation" in child.before
    assert leave(child)[0] == 0

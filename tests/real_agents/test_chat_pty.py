"""``acp2 chat`` against the real v1 agents, once each, in an 80x24 pseudo-terminal as a
person would use it: type a prompt, read the streamed reply, leave with Ctrl-D."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from helpers.processes import ACP2, spawn_pty

from . import fake_gemini
from .agents import RUN_TIMEOUT, Agent, fast_agent, gemini

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "coder"))

import fake_openai

pexpect = pytest.importorskip("pexpect")

pytestmark = pytest.mark.real_agents

#: What prompt_toolkit needs from pexpect, which answers no cursor-position requests.
TERMINAL = {"TERM": "xterm-256color", "COLUMNS": "80", "LINES": "24", "PROMPT_TOOLKIT_NO_CPR": "1"}


def chat_once(agent: Agent, project: Path, reply: str, log: Path) -> tuple[int, str]:
    """Start ``acp2 chat`` on ``agent``, send one prompt, wait for ``reply`` and the end
    of the turn, press Ctrl-D; return the exit status and the screen text seen."""
    child: Any = spawn_pty(
        [*ACP2, "chat", "--permission", "allow", "--", *agent.argv],
        env=agent.env | TERMINAL,
        cwd=project,
    )
    child.logfile_read = open(log, "w")  # noqa: SIM115
    try:
        child.expect("connected to", timeout=RUN_TIMEOUT)
        child.expect("❯", timeout=RUN_TIMEOUT)
        child.sendline("say hello")
        child.expect(reply.split()[-1], timeout=RUN_TIMEOUT)
        child.expect("✓ end_turn", timeout=RUN_TIMEOUT)
        child.expect("❯", timeout=RUN_TIMEOUT)
        child.sendcontrol("d")
        child.expect(pexpect.EOF, timeout=RUN_TIMEOUT)
        child.close()
        return int(child.exitstatus), log.read_text()
    finally:
        if child.isalive():
            child.terminate(force=True)


def test_acp2_chat_talks_to_gemini_cli(gemini_js: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    with fake_gemini.serve() as fake:
        fake.add(fake_gemini.text("Hello ", "from Gemini in a chat."))
        agent = gemini(gemini_js, fake.url, tmp_path)
        status, screen = chat_once(agent, project, "in a chat.", tmp_path / "pty.log")
    assert status == 0
    assert "Gemini CLI" in screen
    assert "acp2 chat --resume" in screen


def test_acp2_chat_talks_to_fast_agent(fast_agent_cmd: list[str], tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    with fake_openai.serve() as fake:
        fake.add(fake_openai.text_reply("Hello from fast-agent in a chat."))
        agent = fast_agent(fast_agent_cmd, fake.url, tmp_path)
        status, screen = chat_once(agent, project, "in a chat.", tmp_path / "pty.log")
    assert status == 0
    assert "fast-agent" in screen


def test_acp2_chat_shows_gemini_clis_new_file_diff_before_asking(
    gemini_js: Path, tmp_path: Path
) -> None:
    # Gemini CLI sends a write's diff only in its permission request (issue 26).
    project = tmp_path / "project"
    project.mkdir()
    target = project / "fresh.txt"
    with fake_gemini.serve() as fake:
        write = {"file_path": str(target), "content": "a fresh line\n"}
        fake.add(fake_gemini.call("write_file", write), fake_gemini.text("Created it."))
        agent = gemini(gemini_js, fake.url, tmp_path)
        child: Any = spawn_pty(
            [*ACP2, "chat", "--", *agent.argv], env=agent.env | TERMINAL, cwd=project
        )
        child.logfile_read = open(tmp_path / "pty.log", "w")  # noqa: SIM115
        try:
            child.expect("❯", timeout=RUN_TIMEOUT)
            child.sendline("create fresh.txt")
            child.expect("permission requested", timeout=RUN_TIMEOUT)
            child.expect("new file", timeout=RUN_TIMEOUT)  # a creation, not an edit
            child.expect("a fresh line", timeout=RUN_TIMEOUT)  # shown before the question
            child.expect("choose", timeout=RUN_TIMEOUT)
            child.send("y")
            child.expect("Created it.", timeout=RUN_TIMEOUT)
            child.expect("✓ end_turn", timeout=RUN_TIMEOUT)
            child.sendcontrol("d")
            child.expect(pexpect.EOF, timeout=RUN_TIMEOUT)
        finally:
            if child.isalive():
                child.terminate(force=True)
    assert target.read_text() == "a fresh line\n"

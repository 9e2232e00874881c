"""Picking a session to resume by its title: ``acp2 chat --resume`` without an id lists
this folder's sessions (the agent's title, else the first prompt; age; folder) and
resumes the pick; ``acp2 run --resume`` without an id prompts the newest session."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from cli_helpers import TEST_AGENT, run_acp2
from pty_helpers import leave, pty_env, spawn_chat

pexpect = pytest.importorskip("pexpect")

#: A colour change rich may put between two words of a row.
GAP = r"(?:\s|\x1b\[[0-9;]*m)+"


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return pty_env(tmp_path / "data")


def agent(tmp_path: Path) -> list[str]:
    return [*TEST_AGENT, "--store", str(tmp_path / "sessions.db")]


def test_resume_without_an_id_lists_titles_and_resumes_the_pick(
    env: dict[str, str], tmp_path: Path
) -> None:
    first = run_acp2(
        "run", "echo remember the walrus", "--", *agent(tmp_path), stdin="", env=env, cwd=tmp_path
    )
    assert first.returncode == 0, first.stderr
    titled = run_acp2("run", "ext", "--", *agent(tmp_path), stdin="", env=env, cwd=tmp_path)
    assert titled.returncode == 0, titled.stderr
    child = spawn_chat(
        ["chat", "--resume", "--", *agent(tmp_path)], env, tmp_path, tmp_path / "pty.log"
    )
    child.expect("resume which\\? \\[1-2")
    rows = str(child.before)
    # the agent's title (session_info_update) is newest; the other has no title and was
    # not started by a chat, so it is untitled
    assert re.search(rf"1{GAP}ext scenario{GAP}just now", rows), rows
    assert re.search(rf"2{GAP}\(untitled\){GAP}just now", rows), rows
    assert str(tmp_path.name) in rows  # the folder
    child.sendline("2")
    child.expect("── resumed ──")
    assert "remember the walrus" in str(child.before)  # the replayed conversation
    child.expect("❯")
    assert leave(child)[0] == 0


def test_a_chats_first_prompt_titles_its_session_for_the_agent_that_gives_none(
    env: dict[str, str], tmp_path: Path
) -> None:
    child = spawn_chat(["chat", "--", *agent(tmp_path)], env, tmp_path, tmp_path / "a.log")
    child.expect("❯")
    child.sendline("echo fix the flaky test")
    child.expect("✓ end_turn")
    child.expect("❯")
    assert leave(child)[0] == 0
    again = spawn_chat(
        ["chat", "--resume", "--", *agent(tmp_path)], env, tmp_path, tmp_path / "b.log"
    )
    again.expect("resume which\\? \\[1-1")
    assert re.search(rf"1{GAP}echo fix the flaky test{GAP}just now", str(again.before))
    again.sendline("")
    again.expect("no session picked")
    again.expect(pexpect.EOF)


def test_run_continue_prompts_the_newest_session_of_the_folder(
    env: dict[str, str], tmp_path: Path
) -> None:
    ids = []
    for text in ("echo older", "echo newest"):
        done = run_acp2(
            "run", "--json", text, "--", *agent(tmp_path), stdin="", env=env, cwd=tmp_path
        )
        assert done.returncode == 0, done.stderr
        ids.append(json.loads(done.stdout.splitlines()[-1])["sessionId"])
    again = run_acp2(
        "run",
        "--json",
        "--continue",
        "echo again",
        "--",
        *agent(tmp_path),
        stdin="",
        env=env,
        cwd=tmp_path,
    )
    assert again.returncode == 0, again.stderr
    assert f"resuming (untitled) ({ids[1]})" in again.stderr
    assert json.loads(again.stdout.splitlines()[-1])["sessionId"] == ids[1]


def test_run_continue_and_resume_together_is_a_usage_error(
    env: dict[str, str], tmp_path: Path
) -> None:
    done = run_acp2(
        "run",
        "--continue",
        "--resume",
        "s1",
        "hi",
        "--",
        *agent(tmp_path),
        stdin="",
        env=env,
        cwd=tmp_path,
    )
    assert done.returncode == 2
    assert "not both" in done.stderr


def test_resume_without_an_id_on_an_agent_that_cannot_list_says_to_give_one(
    env: dict[str, str], tmp_path: Path
) -> None:
    v1_agent = [sys.executable, str(Path(__file__).with_name("v1_tools_agent.py"))]
    done = run_acp2("chat", "--resume", "--", *v1_agent, stdin="", env=env, cwd=tmp_path)
    assert done.returncode == 3
    said = done.stdout + done.stderr
    assert "cannot list its sessions" in said
    assert "give --resume SESSION_ID" in said

"""Lasting approvals in a pseudo-terminal: "always allow" saved as a rule, applied to
the next request, listed and removed with /permissions; a cloned project's settings file
grants nothing until confirmed; ``acp2 run`` applies the saved rules too."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_helpers import TEST_AGENT, run_acp2
from pty_helpers import leave, pty_env, shown, spawn_chat, wait_idle

pexpect = pytest.importorskip("pexpect")


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return pty_env(tmp_path / "data")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


@pytest.fixture
def chat(env: dict[str, str], project: Path, tmp_path: Path) -> Iterator[pexpect.spawn]:
    child = spawn_chat(["chat", "--", *TEST_AGENT], env, project, tmp_path / "pty.log")
    child.expect("connected to acp2 test agent")
    child.expect("❯")
    yield child
    if child.isalive():
        child.terminate(force=True)


def project_file(project: Path) -> Path:
    return project / ".acp2" / "settings.json"


def test_always_allow_saved_for_the_project_answers_the_next_request(
    chat: pexpect.spawn, project: Path
) -> None:
    chat.sendline("tools")
    chat.expect("Allow editing hello.txt")
    chat.expect("waiting for you")
    chat.send("a")
    chat.expect(r"remember edit\(hello.txt\)\?")
    chat.send("p")
    chat.expect(r"saved allow edit\(hello.txt\)")
    wait_idle(chat)
    saved = json.loads(project_file(project).read_text())
    assert saved["permissions"]["allow"] == ["edit(hello.txt)"]
    chat.sendline("tools")
    chat.expect(r"allowed by rule edit\(hello.txt\) \(project")
    chat.expect("Edited hello.txt.")
    wait_idle(chat)
    chat.sendline("/permissions")
    chat.expect(shown("1 allow edit(hello.txt) (project)"))
    chat.sendline("/permissions remove 1")
    chat.expect("removed allow edit")
    chat.expect("❯")
    chat.sendline("tools")
    chat.expect("waiting for you")  # asked again
    chat.send("n")
    wait_idle(chat)
    assert leave(chat)[0] == 0


def test_a_cloned_project_file_asks_until_the_user_confirms_it(
    chat: pexpect.spawn, project: Path
) -> None:
    path = project_file(project)
    path.parent.mkdir()
    path.write_text(json.dumps({"permissions": {"allow": ["edit"]}}))
    chat.sendline("tools")
    chat.expect("waiting for you")  # the project's own "edit" rule is not trusted
    chat.send("n")
    wait_idle(chat)
    chat.sendline("/permissions")
    chat.expect(shown("edit (project) (not confirmed)"))
    chat.sendline("/permissions trust")
    chat.expect("confirmed")
    chat.expect("❯")
    chat.sendline("tools")
    chat.expect(r"allowed by rule edit \(project")
    wait_idle(chat)
    assert leave(chat)[0] == 0


def test_acp2_run_answers_from_the_users_saved_rules(env: dict[str, str], project: Path) -> None:
    args = ["run", "--permission", "ask", "tools", "--", *TEST_AGENT]
    asked = run_acp2(*args, stdin="", env=env, cwd=project)
    assert "Permission denied" in asked.stdout  # nobody typed an answer
    user = Path(env["ACP2_CONFIG_DIR"]) / "settings.json"
    user.parent.mkdir(parents=True)
    user.write_text(json.dumps({"permissions": {"allow": [f"edit({project}/*.txt)"]}}))
    done = run_acp2(*args, stdin="", env=env, cwd=project)
    assert done.returncode == 0, done.stderr
    assert "Edited hello.txt." in done.stdout
    assert "allowed by rule edit(" in done.stderr


def test_acp2_run_on_a_terminal_saves_an_always_answer_for_the_user(
    env: dict[str, str], project: Path, tmp_path: Path
) -> None:
    args = ["run", "tools", "--", *TEST_AGENT]
    child = spawn_chat(args, env, project, tmp_path / "run.log")
    child.expect("ctrl-c cancels the turn")
    child.send("a")
    child.expect(r"remember edit\(hello.txt\)\?")
    child.send("u")
    child.expect(r"saved allow edit\(/")  # for every folder: this one file, by its path
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    user = Path(env["ACP2_CONFIG_DIR"]) / "settings.json"
    saved = json.loads(user.read_text())["permissions"]["allow"]
    assert saved == [f"edit({project / 'hello.txt'})"]
    again = run_acp2(
        *args[: -len(TEST_AGENT) - 1],
        "--permission",
        "ask",
        "--",
        *TEST_AGENT,
        stdin="",
        env=env,
        cwd=project,
    )
    assert "Edited hello.txt." in again.stdout

"""``acp2 run`` and ``acp2 chat`` show the diff a v1 agent sends only in its permission
request before they ask (issue 26, fault 1): real processes, a scripted v1 agent that asks
to write a new file as Gemini CLI does (``oldText: ""``, ``_meta.kind: "add"``)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import isolated_env, run_acp2
from pty_helpers import leave, pty_env, spawn_chat, wait_idle

from helpers.timeouts import RUN_TIMEOUT

AGENT = [sys.executable, str(Path(__file__).with_name("v1_write_agent.py"))]
NEW_LINE = "hello from the write agent"


def _run(tmp_path: Path, *flags: str, stdin: str = "") -> Any:
    return run_acp2(
        "run",
        *flags,
        "--cwd",
        str(tmp_path),
        "write it",
        "--",
        *AGENT,
        stdin=stdin,
        env=isolated_env(tmp_path / "data"),
        cwd=tmp_path,
        timeout=RUN_TIMEOUT,
    )


def test_the_json_permission_line_carries_the_diff_as_a_file_creation(tmp_path: Path) -> None:
    done = _run(tmp_path, "--json", "--permission", "allow")
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    (asked,) = [line["permissionRequest"] for line in lines if "permissionRequest" in line]
    call = asked["subject"]["toolCall"]
    target = str(tmp_path / "new.txt")
    assert call["locations"] == [{"path": target}]
    (diff,) = call["content"]
    assert diff["changes"] == [{"operation": "add", "path": target, "fileType": "text"}]
    assert "--- /dev/null" in diff["patch"]["text"]
    assert f"+{NEW_LINE}" in diff["patch"]["text"]
    assert lines[-1]["text"] == "wrote new.txt"
    assert (tmp_path / "new.txt").read_text() == NEW_LINE + "\n"


def test_the_asked_question_shows_the_new_files_diff_before_the_choice(tmp_path: Path) -> None:
    done = _run(tmp_path, "--permission", "ask", stdin="y\n")
    assert done.returncode == 0, done.stderr
    err = done.stderr
    assert "[permission] Writing to new.txt" in err
    assert err.index("--- /dev/null") < err.index(f"+{NEW_LINE}") < err.index("choose [")
    assert done.stdout.strip() == "wrote new.txt"


pexpect = pytest.importorskip("pexpect")


@pytest.fixture
def chat(tmp_path: Path) -> Iterator[Any]:
    child = spawn_chat(
        ["chat", "--", *AGENT], pty_env(tmp_path / "data"), tmp_path, tmp_path / "pty.log"
    )
    child.expect("❯")
    yield child
    if child.isalive():
        child.terminate(force=True)


def test_the_chat_permission_box_shows_the_diff_before_the_question(
    chat: Any, tmp_path: Path
) -> None:
    chat.sendline("write it")
    chat.expect("permission requested")
    chat.expect("new file")  # the diff's header: a creation, not an edit of an empty file
    chat.expect(NEW_LINE)  # the diff's added line, shown before the person is asked
    chat.expect("choose")
    chat.send("y")
    chat.expect("allowed")
    wait_idle(chat)
    assert (tmp_path / "new.txt").read_text() == NEW_LINE + "\n"
    assert leave(chat)[0] == 0

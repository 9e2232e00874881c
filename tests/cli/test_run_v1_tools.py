"""``acp2 run --fs --terminal`` against a v1 agent that reads, writes and runs a command
through its client (real processes: acp2 run, the agent, the command)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from cli_helpers import isolated_env, run_acp2

from helpers.timeouts import RUN_TIMEOUT

AGENT = [sys.executable, str(Path(__file__).with_name("v1_tools_agent.py"))]


def _run(tmp_path: Path, *flags: str) -> tuple[int, list[dict[str, object]], str]:
    (tmp_path / "notes.txt").write_text("the notes\n")
    done = run_acp2(
        "run",
        "--json",
        "--permission",
        "allow",
        "--cwd",
        str(tmp_path),
        *flags,
        "go",
        "--",
        *AGENT,
        stdin="",
        env=isolated_env(tmp_path / "data"),
        cwd=tmp_path,
        timeout=RUN_TIMEOUT,
    )
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    return done.returncode, lines, done.stderr


def test_acp2_run_serves_a_v1_agents_files_and_terminals(tmp_path: Path) -> None:
    code, lines, stderr = _run(tmp_path, "--fs", "--terminal")
    assert code == 0, stderr
    summary = lines[-1]
    assert summary["stopReason"] == "end_turn"
    assert summary["text"] == ("read=the notes; wrote=out.txt; terminal=from the terminal; exit=0")
    assert (tmp_path / "out.txt").read_text() == "written by the agent\n"
    # The command's output reached the v2 view as the terminal the tool call shows.
    kinds = [line.get("sessionUpdate") for line in lines]
    assert "terminal_update" in kinds
    assert "terminal_output_chunk" in kinds
    asked = [line["permissionRequest"] for line in lines if "permissionRequest" in line]
    # The write is asked as a plain question, the command with a command subject.
    assert [request.get("subject", {}).get("type") for request in asked] == [None, "command"]


def test_without_the_flags_a_v1_agents_requests_answer_method_not_found(tmp_path: Path) -> None:
    code, lines, stderr = _run(tmp_path)
    assert code == 0, stderr
    assert lines[-1]["text"] == "read=error -32601; wrote=error -32601; error -32601"
    assert not (tmp_path / "out.txt").exists()


def test_acp2_chat_serves_them_too(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("the notes\n")
    done = run_acp2(
        "chat",
        "--plain",
        "--permission",
        "allow",
        "--cwd",
        str(tmp_path),
        "--fs",
        "--terminal",
        "--",
        *AGENT,
        stdin="go\n",
        env=isolated_env(tmp_path / "data"),
        cwd=tmp_path,
        timeout=RUN_TIMEOUT,
    )
    assert done.returncode == 0, done.stderr
    assert "read=the notes; wrote=out.txt; terminal=from the terminal; exit=0" in done.stdout


def test_the_run_help_lists_the_serving_flags(tmp_path: Path) -> None:
    done = run_acp2("run", "--help", stdin="", env=isolated_env(tmp_path), cwd=tmp_path)
    assert "--fs" in done.stdout
    assert "--terminal" in done.stdout
    chat = run_acp2("chat", "--help", stdin="", env=isolated_env(tmp_path), cwd=tmp_path)
    assert "--fs" in chat.stdout
    assert "--terminal" in chat.stdout

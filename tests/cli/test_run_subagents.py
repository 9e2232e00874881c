"""``acp2 run --json`` with an agent that delegates to a child session (Preview
subagents): a real ``acp2 run`` process drives ``acp2 test-agent`` over stdio, or
``acp2 serve --test-agent`` by URL, and the child's own updates are printed too, each
saying which child of which session it is."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers.serve_process import serving
from helpers.timeouts import RUN_TIMEOUT

AGENT = [sys.executable, "-m", "acp2.cli.main", "test-agent"]


@contextlib.contextmanager
def reaching(over: str, tmp_path: Path) -> Iterator[list[str]]:
    """The arguments that reach the test agent: spawned over stdio, or an ``acp2 serve
    --test-agent`` subprocess over WebSocket."""
    if over == "stdio":
        yield ["--", *AGENT]
        return
    with serving(tmp_path, "--test-agent") as port:
        yield ["--url", f"http://127.0.0.1:{port}/acp"]


@pytest.mark.parametrize("over", ["stdio", "serve"])
def test_run_json_prints_the_childs_updates_naming_the_child_and_its_parent(
    tmp_path: Path, over: str
) -> None:
    argv = [sys.executable, "-m", "acp2.cli.main", "run", "--json", "--cwd", str(tmp_path)]
    with reaching(over, tmp_path) as way:
        done = subprocess.run(
            [*argv, "subagent found three pages", *way],
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    assert done.returncode == 0, done.stderr
    *lines, summary = [json.loads(line) for line in done.stdout.splitlines()]
    parent = summary["sessionId"]
    announced = [u for u in lines if u.get("sessionUpdate") == "subagent_update"]
    child = announced[0]["sessionId"]
    of_child = [line for line in lines if "update" in line]
    assert of_child
    assert all((x["sessionId"], x["parentSessionId"]) == (child, parent) for x in of_child)
    said = [
        x["update"]["content"]["text"]
        for x in of_child
        if x["update"]["sessionUpdate"] == "agent_message_chunk"
    ]
    assert "".join(said) == "found three pages"
    assert of_child[-1]["update"]["sessionUpdate"] == "state_update"
    assert summary["text"] == "helper done"

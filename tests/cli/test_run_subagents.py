"""``acp2 run --json`` with an agent that delegates to a child session (Preview
subagents): a real ``acp2 run`` process drives ``acp2 test-agent`` over stdio, and the
child's own updates are printed too, each saying which child of which session it is."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from helpers.timeouts import RUN_TIMEOUT

AGENT = [sys.executable, "-m", "acp2.cli.main", "test-agent"]


def test_run_json_prints_the_childs_updates_naming_the_child_and_its_parent(
    tmp_path: Path,
) -> None:
    argv = [sys.executable, "-m", "acp2.cli.main", "run", "--json", "--cwd", str(tmp_path)]
    done = subprocess.run(
        [*argv, "subagent found three pages", "--", *AGENT],
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

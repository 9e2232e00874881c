"""``examples/notes_agent.py`` -- the complete example of ``docs/writing-an-agent.md`` --
runs as the guide says: a plan, a tool call with a diff, a permission request, the
call's content; driven by ``acp2 run`` over real stdio."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from helpers import timeouts

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "notes_agent.py"
GUIDE = ROOT / "docs" / "writing-an-agent.md"


def run(tmp_path: Path, permission: str) -> subprocess.CompletedProcess[str]:
    """``acp2 run --json`` the example in ``tmp_path`` with a permission policy."""
    argv = [sys.executable, "-m", "acp2", "run", "--json", "--permission", permission]
    return subprocess.run(
        [*argv, "--cwd", str(tmp_path), "buy milk", "--", sys.executable, str(EXAMPLE)],
        capture_output=True,
        text=True,
        timeout=timeouts.RUN_TIMEOUT,
        check=False,
    )


def _updates(stdout: str) -> list[dict[str, Any]]:
    """The session updates and the closing summary of ``acp2 run --json``; the permission
    request and answer lines are checked on their own."""
    lines = [json.loads(line) for line in stdout.splitlines()]
    asked = [line for line in lines if "permissionRequest" in line]
    answered = [line for line in lines if "permissionResponse" in line]
    assert len(asked) == len(answered) == 1
    return [line for line in lines if line not in asked and line not in answered]


def test_the_guide_shows_the_example_file_as_it_is() -> None:
    code = EXAMPLE.read_text().split('"""\n', 2)[2].strip()
    blocks = re.findall(r"```python\n(.*?)```", GUIDE.read_text(), re.S)
    assert code in [block.strip() for block in blocks]


def test_approved_it_plans_shows_a_diff_asks_writes_and_reports(tmp_path: Path) -> None:
    done = run(tmp_path, "allow")
    assert done.returncode == 0, done.stderr
    *updates, summary = _updates(done.stdout)
    kinds = [u["sessionUpdate"] for u in updates]
    assert kinds.count("plan_update") == 2
    first_call = next(u for u in updates if u["sessionUpdate"] == "tool_call_update")
    assert first_call["kind"] == "edit"
    assert first_call["content"][0]["type"] == "diff"
    assert {"sessionUpdate": "state_update", "state": "requires_action"} in updates
    chunk = next(u for u in updates if u["sessionUpdate"] == "tool_call_content_chunk")
    assert chunk["content"]["content"] == {"type": "text", "text": "Wrote 9 bytes."}
    final_plan = [u for u in updates if u["sessionUpdate"] == "plan_update"][-1]
    assert {e["status"] for e in final_plan["plan"]["entries"]} == {"completed"}
    assert (tmp_path / "notes.txt").read_text() == "buy milk\n"
    assert summary["text"] == f"Saved your note to {tmp_path / 'notes.txt'}."


def test_declined_the_tool_call_fails_and_nothing_is_written(tmp_path: Path) -> None:
    done = run(tmp_path, "deny")
    assert done.returncode == 0, done.stderr
    *updates, summary = _updates(done.stdout)
    statuses = [u.get("status") for u in updates if u["sessionUpdate"] == "tool_call_update"]
    assert statuses == ["pending", "failed"]
    assert not (tmp_path / "notes.txt").exists()
    assert summary["text"] == "I did not write notes.txt."

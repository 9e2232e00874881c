"""The example in ``docs/writing-a-client.md`` runs as written (against the test agent)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from helpers.timeouts import RUN_TIMEOUT

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "writing-a-client.md"


def example() -> str:
    """The guide's first Python code block."""
    match = re.search(r"```python\n(.*?)```", GUIDE.read_text(), re.S)
    assert match is not None
    return match.group(1)


def test_the_guide_example_is_about_twenty_lines() -> None:
    """The issue asks for a 20-line example (blank lines not counted)."""
    lines = [line for line in example().splitlines() if line.strip()]
    assert len(lines) <= 22


def test_the_guide_example_runs_against_the_test_agent(tmp_path: Path) -> None:
    """The example connects, runs `tools` with allow_all and prints the reduced reply."""
    agent = [sys.executable, "-m", "acp2.cli.main", "test-agent"]
    code = example().replace('["acp2", "test-agent"]', repr(agent))
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
        cwd=tmp_path,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "connected to acp2 test agent" in done.stdout
    assert "stopped: end_turn" in done.stdout
    assert done.stdout.rstrip().endswith("Edited hello.txt.")

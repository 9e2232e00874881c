"""``examples/echo_agent.py`` works as its docstring says, driven by ``acp2 run``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from helpers import timeouts

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "echo_agent.py"


def test_the_echo_example_streams_the_prompt_back_and_ends_the_turn(tmp_path: Path) -> None:
    argv = [sys.executable, "-m", "acp2", "run", "--cwd", str(tmp_path), "hello there"]
    done = subprocess.run(
        [*argv, "--", sys.executable, str(EXAMPLE)],
        capture_output=True,
        text=True,
        timeout=timeouts.RUN_TIMEOUT,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "hello there"

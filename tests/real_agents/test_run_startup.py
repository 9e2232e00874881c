"""``acp2 run --timeout`` bounds the agent's start-up too: Gemini CLI and fast-agent can
take more than the client's default 30 s to answer ``initialize`` on a busy machine."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from acp2.client.launch import DEFAULT_INITIALIZE_TIMEOUT
from helpers.processes import ACP2, isolated_env
from helpers.timeouts import PROCESS_TIMEOUT

pytestmark = pytest.mark.real_agents

#: ``acp2 test-agent`` started only after the default start-up bound has passed (what
#: the client wrote meanwhile waits in the pipe).
LATE = DEFAULT_INITIALIZE_TIMEOUT + 2
LATE_AGENT = [
    sys.executable,
    "-c",
    f"import os, sys, time; time.sleep({LATE}); "
    "os.execv(sys.executable, [sys.executable, '-m', 'acp2', 'test-agent'])",
]


def test_run_waits_for_a_slow_start_as_long_as_its_timeout(tmp_path: Path) -> None:
    argv = [*ACP2, "run", "--timeout", str(LATE + PROCESS_TIMEOUT), "echo late", "--"]
    done = subprocess.run(
        [*argv, *LATE_AGENT],
        capture_output=True,
        text=True,
        env=isolated_env(tmp_path / "data") | {"PYTHONUNBUFFERED": "1"},
        cwd=tmp_path,
        timeout=LATE + 2 * PROCESS_TIMEOUT,
        check=False,
    )
    assert (done.returncode, done.stdout.strip()) == (0, "late"), done.stderr

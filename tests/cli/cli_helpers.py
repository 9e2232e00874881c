"""Helpers for the end-to-end tests of ``acp2 chat`` and ``acp2 demo`` (real processes)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ACP2 = [sys.executable, "-m", "acp2"]
TEST_AGENT = [*ACP2, "test-agent"]


def isolated_env(data_dir: Path) -> dict[str, str]:
    """Our environment with the acp2 data directory (history, agent stores) in ``data_dir``."""
    env = dict(os.environ)
    env["ACP2_DATA_DIR"] = str(data_dir)
    env.pop("ACP2_MODEL", None)
    return env


def run_acp2(
    *args: str, stdin: str, env: dict[str, str], cwd: Path, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """Run ``acp2 ARGS`` with ``stdin`` as its input (not a terminal); bounded."""
    return subprocess.run(
        [*ACP2, *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=timeout,
        check=False,
    )

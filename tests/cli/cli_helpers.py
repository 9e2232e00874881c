"""Helpers for the end-to-end tests of ``acp2 chat`` and ``acp2 demo`` (real processes)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from helpers.processes import ACP2, isolated_env

__all__ = ["ACP2", "TEST_AGENT", "isolated_env", "run_acp2"]

TEST_AGENT = [*ACP2, "test-agent"]


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

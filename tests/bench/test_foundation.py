"""The foundation benchmark (codec, Connection over memory and stdio) runs and reports."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "foundation.py"


def test_foundation_benchmark_prints_every_row_next_to_the_raw_baseline() -> None:
    out = subprocess.run(
        [sys.executable, str(SCRIPT), "--n", "2000"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    for row in ("acp2 decode (typed)", "raw pipe + parse", "memory_pair", "over stdio"):
        assert row in out

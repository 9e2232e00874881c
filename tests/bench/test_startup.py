"""The start-up driver (``bench/startup.py``) warms up once before it measures, unless
``ACP2_BENCH_STARTUP_WARMUP=0`` (set by ``run.py --tiny``) says not to."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.timeouts import SCENARIO_TIMEOUT

STARTUP = Path(__file__).resolve().parents[2] / "bench" / "startup.py"
#: An agent that notes each start in the file given as its argument and answers the
#: ``initialize`` request.
AGENT = """\
import sys
with open(sys.argv[1], "a") as log:
    log.write("started\\n")
line = sys.stdin.readline()
sys.stdout.write('{"jsonrpc":"2.0","id":0,"result":{}}\\n')
sys.stdout.flush()
"""


@pytest.mark.parametrize(("warmup", "starts"), [(None, 3), ("0", 2)])
def test_the_agent_starts_once_more_than_measured_unless_warm_up_is_off(
    tmp_path: Path, warmup: str | None, starts: int
) -> None:
    agent = tmp_path / "agent.py"
    agent.write_text(AGENT)
    log = tmp_path / "starts.log"
    env = {k: v for k, v in os.environ.items() if k != "ACP2_BENCH_STARTUP_WARMUP"}
    if warmup is not None:
        env["ACP2_BENCH_STARTUP_WARMUP"] = warmup
    argv = [sys.executable, str(STARTUP), "--runs", "2", "--", sys.executable, str(agent), str(log)]

    done = subprocess.run(
        argv, capture_output=True, text=True, env=env, timeout=SCENARIO_TIMEOUT, check=False
    )

    assert done.returncode == 0, done.stderr
    assert "spawn_init_ms" in done.stdout
    assert log.read_text().count("started") == starts

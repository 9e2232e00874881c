"""The slow tier (tests/real_agents) stays out of the default run and comes in when asked:
``-m real_agents`` or ``ACP2_REAL_AGENTS=1`` (its conftest). Nothing is installed or run
here: only collection."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.timeouts import RUN_TIMEOUT

ROOT = Path(__file__).resolve().parents[1]


def collected(*args: str, env: dict[str, str] | None = None) -> str:
    """The last line of ``pytest --collect-only -q tests/real_agents ARGS``."""
    # Without the plugins collection does not need: importing hypothesis's alone was
    # half of each run's CPU.
    plugins = ["-p", "no:hypothesispytest", "-p", "no:xdist"]
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            *plugins,
            "--collect-only",
            "-q",
            "tests/real_agents",
            *args,
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=RUN_TIMEOUT,
        check=False,
    )
    return done.stdout.strip().splitlines()[-1]


@pytest.fixture
def plain_env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("ACP2_REAL_AGENTS", None)
    return env


def test_the_default_run_deselects_every_real_agent_test(plain_env: dict[str, str]) -> None:
    last = collected(env=plain_env)
    assert "deselected" in last
    assert " selected" not in last.replace("deselected", "")


@pytest.mark.parametrize(
    ("args", "extra"),
    [(("-m", "real_agents"), {}), ((), {"ACP2_REAL_AGENTS": "1"})],
    ids=["marker", "env"],
)
def test_the_tier_is_collected_when_asked_for(
    plain_env: dict[str, str], args: tuple[str, ...], extra: dict[str, str]
) -> None:
    last = collected(*args, env=plain_env | extra)
    assert "deselected" not in last
    assert "tests collected" in last

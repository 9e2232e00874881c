"""The TypeScript SDK 2.4.0 stable (ACP v1) test client against its test agent.

This pins the v1 peers themselves (``ts/v1_client.mjs``, ``ts/v1_agent.mjs``): one
client run plays every scenario of ``TS_CHECKS`` on one connection, through the wire
tap, with ``hello.txt`` in the session cwd for ``read``. Each scenario must keep v1's
lifecycle and its contract, and every frame, both directions, must be valid under the
vendored v1 schema.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from .peers import run_ts_v1_client, ts_v1_agent_argv
from .v1_expectations import TS_CHECKS, check_client_wire, check_v1_report, scenario_reports

pytestmark = pytest.mark.interop

SCENARIOS = sorted(TS_CHECKS)


@pytest.fixture(scope="module")
def pair_run(ts_sdk: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path]:
    """The report of one client run through every scenario, and its tap log."""
    cwd = tmp_path_factory.mktemp("ts-v1-pair")
    (cwd / "hello.txt").write_text("hello\n")
    log = cwd / "wire.jsonl"
    agent = ts_v1_agent_argv(ts_sdk)
    return run_ts_v1_client(ts_sdk, SCENARIOS, agent, tap_log=log, cwd=cwd), log


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_ts_v1_client_and_ts_v1_agent_complete_the_scenario(
    pair_run: tuple[dict[str, Any], Path], scenario: str
) -> None:
    report, _ = pair_run

    check_v1_report(scenario_reports(report)[scenario])


def test_every_frame_of_the_ts_v1_pair_is_valid_v1_and_the_agent_exits_cleanly(
    pair_run: tuple[dict[str, Any], Path],
) -> None:
    check_client_wire(*pair_run)

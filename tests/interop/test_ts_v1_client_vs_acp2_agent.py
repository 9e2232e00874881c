"""The TypeScript SDK 2.4.0 stable (ACP v1) client (``ts/v1_client.mjs``) drives
``acp2 test-agent`` and ``acp2 agent --model scripted``, which serve it through the v1
front bridge (issue 12).

One client run per agent plays all its scenarios on one connection (one session each),
through the wire tap; each scenario must keep the v1 lifecycle and its contract
(``v1_expectations``, with the relaxations acp2's v1 projection needs, shared with the
Python SDK client's test), every frame must be valid under the vendored v1 schema, and
the agent exits 0 once the client closes its stdin.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from helpers import timeouts

from .peers import run_ts_v1_client
from .test_py_v1_client_vs_acp2_agent import ACP2_TEST_AGENT, CHECKED, SCENARIOS, within_turns
from .v1_expectations import (
    check_client_wire,
    check_v1_common,
    scenario_reports,
    v1_updates,
)

pytestmark = pytest.mark.interop

Run = tuple[dict[str, Any], Path]


@pytest.fixture(scope="module")
def test_agent_run(ts_sdk: Path, tmp_path_factory: pytest.TempPathFactory) -> Run:
    """The TS v1 client's run of every shared scenario against ``acp2 test-agent``."""
    cwd = tmp_path_factory.mktemp("ts-v1-test-agent")
    log = cwd / "wire.jsonl"
    return run_ts_v1_client(ts_sdk, SCENARIOS, ACP2_TEST_AGENT, tap_log=log, cwd=cwd), log


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_ts_v1_client_drives_acp2_test_agent_through_the_scenario(
    test_agent_run: Run, scenario: str
) -> None:
    report = scenario_reports(test_agent_run[0])[scenario]

    check_v1_common(within_turns(report))
    CHECKED[scenario](report)


def test_every_frame_between_the_ts_v1_client_and_acp2_test_agent_is_valid_v1(
    test_agent_run: Run,
) -> None:
    check_client_wire(*test_agent_run)


# ---------------------------------------------------------------- the coding agent


def project_tests(project: Path) -> int:
    """The exit code of the sample project's own tests."""
    done = subprocess.run(
        [sys.executable, "-m", "unittest"],
        cwd=project,
        capture_output=True,
        timeout=timeouts.RUN_TIMEOUT,
    )
    return done.returncode


@pytest.fixture(scope="module")
def sample_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the sample project, whose tests fail until the agent fixes it."""
    from acp2.coder.sample import copy_sample_project

    project = copy_sample_project(tmp_path_factory.mktemp("ts-v1-coding-agent") / "project")
    assert project_tests(project) != 0, "the sample project's tests should fail before the fix"
    return project


@pytest.fixture(scope="module")
def coding_agent_run(ts_sdk: Path, sample_project: Path) -> Run:
    """A turn cancelled at its first permission, then a full turn that fixes the sample
    project, each in its own session of ``acp2 agent --model scripted``."""
    tmp = sample_project.parent
    agent = [
        *(sys.executable, "-m", "acp2", "agent", "--model", "scripted", "--pace", "0"),
        *("--store", str(tmp / "history.sqlite")),
    ]
    log = tmp / "wire.jsonl"
    report = run_ts_v1_client(
        ts_sdk,
        ["cancel-permission", "tools-allow"],
        agent,
        tap_log=log,
        cwd=sample_project,
        prompt="Fix the failing test.",
        timeout=timeouts.RUN_TIMEOUT,
    )
    return report, log


def test_ts_v1_client_cancels_acp2_coding_agent_at_its_permission(coding_agent_run: Run) -> None:
    report = scenario_reports(coding_agent_run[0])["cancel-permission"]

    check_v1_common(within_turns(report))
    assert [p["outcome"] for p in report["permissions"]] == [{"outcome": "cancelled"}]
    assert report["stopReasons"] == ["cancelled"]
    (asked,) = [e for e in report["events"] if e["type"] == "permission"]
    call_id = asked["params"]["toolCall"]["toolCallId"]
    statuses = [u.get("status") for u in v1_updates(report) if u.get("toolCallId") == call_id]
    assert [s for s in statuses if s][-1] == "failed"  # v1's tool statuses have no "cancelled"


def test_ts_v1_client_drives_acp2_coding_agent_through_a_full_turn(
    coding_agent_run: Run, sample_project: Path
) -> None:
    report = scenario_reports(coding_agent_run[0])["tools-allow"]

    check_v1_common(within_turns(report))
    assert report["stopReasons"] == ["end_turn"]
    assert report["permissions"], "the coding agent asked no permission"
    assert all(p["outcome"]["outcome"] == "selected" for p in report["permissions"])
    kinds = {u["sessionUpdate"] for u in v1_updates(report)}
    assert {"plan", "tool_call", "tool_call_update", "agent_message_chunk"} <= kinds, kinds
    last: dict[str, str] = {}
    for u in v1_updates(report):
        if u["sessionUpdate"].startswith("tool_call") and u.get("status"):
            last[u["toolCallId"]] = u["status"]
    assert set(last.values()) == {"completed"}, last
    assert report["text"], "the coding agent said nothing"
    assert project_tests(sample_project) == 0


def test_every_frame_between_the_ts_v1_client_and_acp2_coding_agent_is_valid_v1(
    coding_agent_run: Run,
) -> None:
    check_client_wire(*coding_agent_run)

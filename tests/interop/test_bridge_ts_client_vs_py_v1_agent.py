"""The TypeScript SDK's v2 client drives the Python SDK 0.12.1 v1 agent through
``acp2 bridge`` (the back direction: a v1 agent presented as v2).

The wire is tapped on both sides of the bridge: the client's side is checked under both
v2 drafts, the agent's side under the vendored v1 schema. Full turns: text, a tool call
with a permission allowed or rejected, a cancel, and a cancel while the permission is
open.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

import schema_validation
from helpers.timeouts import RUN_TIMEOUT as TIMEOUT

from . import expectations
from .expectations import check_common, is_state, last_stop, tool_statuses, updates
from .peers import py_agent_argv, run_ts_client, tap_argv
from .v1_schema import validate_v1_log
from .wire import read_log

pytestmark = pytest.mark.interop


#: The scenarios the v1 agent plays by the TypeScript client's words.
SCENARIOS = ("echo", "tools-allow", "tools-reject", "cancel", "cancel-permission")


def bridged(log: Path, agent_argv: list[str]) -> list[str]:
    """``acp2 bridge`` in front of ``agent_argv``, whose wire is tapped into ``log``."""
    return [sys.executable, "-m", "acp2", "bridge", "--", *tap_argv(log, agent_argv)]


def permission_asked(report: dict[str, Any]) -> dict[str, Any]:
    """The one permission request, on a tool call announced before it."""
    (asked,) = [e for e in report["events"] if e["type"] == "permission"]
    subject = asked["params"]["subject"]
    assert subject["type"] == "tool_call"
    calls = {u["toolCallId"] for u in updates(report, "tool_call_update")}
    assert subject["toolCall"]["toolCallId"] in calls
    return asked


def tools_allowed(report: dict[str, Any]) -> None:
    permission_asked(report)
    statuses = tool_statuses(report)
    assert (statuses[0], statuses[-1]) == ("pending", "completed"), statuses
    assert "in_progress" in statuses
    assert any(c.get("type") == "diff" for c in expectations.tool_contents(report))
    assert last_stop(report) == "end_turn"


def tools_rejected(report: dict[str, Any]) -> None:
    permission_asked(report)
    assert tool_statuses(report)[-1] == "failed"
    assert last_stop(report) == "end_turn"


def cancelled_in_permission(report: dict[str, Any]) -> None:
    permission_asked(report)
    assert [p["outcome"] for p in report["permissions"]] == [{"outcome": "cancelled"}]
    expectations._after_cancel(report)


CHECKS = {
    "echo": expectations.CHECKS["echo"],
    "tools-allow": tools_allowed,
    "tools-reject": tools_rejected,
    "cancel": expectations.CHECKS["cancel"],
    "cancel-permission": cancelled_in_permission,
}


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_ts_v2_client_drives_the_py_v1_agent_through_acp2_bridge(
    ts_sdk: Path, py_sdk_v1: Path, tmp_path: Path, scenario: str
) -> None:
    client_side, agent_side = tmp_path / "v2.jsonl", tmp_path / "v1.jsonl"
    agent = bridged(agent_side, py_agent_argv(py_sdk_v1, "v1"))

    report = run_ts_client(
        ts_sdk, scenario, agent, tap_log=client_side, cwd=tmp_path, timeout=TIMEOUT
    )

    check_common(report)
    CHECKS[scenario](report)
    assert report["initialize"]["info"]["name"] == "acp2-interop-py-v1-agent"
    assert any(is_state("running")(e) for e in report["events"])
    assert report["agentExit"] == {"code": 0, "signal": None}
    assert schema_validation.validate_log(client_side) == []
    assert validate_v1_log(agent_side) == []
    (hello, *_) = read_log(agent_side)
    assert hello.message["params"]["protocolVersion"] == 2  # the client's own request

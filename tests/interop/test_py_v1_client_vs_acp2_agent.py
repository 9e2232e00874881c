"""The official Python SDK 0.12.1 v1 client (``py/v1_client.py``) drives ``acp2
test-agent``, which serves it through the v1 front bridge (issue 12).

Each run goes through the wire tap: the v1 lifecycle and the scenario's contract
(``v1_expectations``), every frame valid under the vendored v1 schema, and the agent
exits 0 once the client closes its stdin. acp2's test agent announces its commands right
after ``session/new`` (v1 allows updates outside a prompt), so the window check of
``check_v1_common`` is relaxed for those updates only.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from . import v1_expectations
from .peers import run_py_client
from .v1_expectations import CHECKS
from .v1_schema import validate_v1_log
from .wire import read_log

pytestmark = pytest.mark.interop

ACP2_TEST_AGENT = [sys.executable, "-m", "acp2", "test-agent"]

#: The v1 client's scenarios that acp2's test agent plays by the same words.
SCENARIOS = ("echo", "tools-allow", "tools-reject", "cancel", "cancel-permission", "load", "fail")

#: Updates a session may get outside any prompt: its commands, announced at creation.
OUTSIDE_A_TURN = ("available_commands_update",)


def within_turns(report: dict[str, Any]) -> dict[str, Any]:
    """``report`` without the updates v1 lets an agent send outside a prompt."""
    events = [
        e
        for e in report["events"]
        if not (e["type"] == "update" and e["update"].get("sessionUpdate") in OUTSIDE_A_TURN)
    ]
    sdk = [
        u for u in report["sdkUpdates"] if u["update"].get("sessionUpdate") not in OUTSIDE_A_TURN
    ]
    return report | {"events": events, "sdkUpdates": sdk}


def tools_allowed(report: dict[str, Any]) -> None:
    """``tools-allow`` as acp2 projects it: the v2 structured diff's one hunk arrives as
    v1's native ``diff`` (the region before and after), which the SDK client decodes."""
    v1_expectations._permission(report)
    statuses = v1_expectations.tool_statuses(report)
    assert (statuses[0], statuses[-1]) == ("pending", "completed"), statuses
    contents = [
        c
        for u in v1_expectations.v1_updates(report, "tool_call_update")
        for c in u.get("content") or []
    ]
    diffs = [c for c in contents if c.get("type") == "diff"]
    assert diffs, contents
    assert (diffs[0]["oldText"], diffs[0]["newText"]) == ("hello\n", "hello, world\n")
    assert report["stopReasons"] == ["end_turn"]


CHECKED = CHECKS | {"tools-allow": tools_allowed}


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_py_v1_client_drives_acp2_test_agent_through_the_scenario(
    py_sdk_v1: Path, tmp_path: Path, scenario: str
) -> None:
    log = tmp_path / "wire.jsonl"

    report = run_py_client(
        py_sdk_v1, scenario, ACP2_TEST_AGENT, tap_log=log, version="v1", cwd=tmp_path
    )

    v1_expectations.check_v1_common(within_turns(report))
    CHECKED[scenario](report)
    assert len(read_log(log)) == len(report["events"]), (
        "the tap and the client saw different traffic"
    )
    assert report["agentExit"] == {"code": 0, "signal": None}
    assert validate_v1_log(log) == []

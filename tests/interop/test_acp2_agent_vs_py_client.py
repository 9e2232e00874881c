"""The official Python SDK 1.0.0rc3 v2 client (``py/v2_client.py``) drives acp2's agents.

``acp2 test-agent`` runs the client scenarios whose words it shares (``all`` is sent
with ``--prompt`` for ``tools-allow``); ``acp2 agent --model scripted`` runs a full
turn on a copy of the sample project. Each run goes through the wire tap:

- ``check_report``: the lifecycle and the scenario's contract, as the client saw it;
- the SDK's ``session_update`` handler received every update as it was sent, less
  exactly the Nov fields alpha.5 does not model (``ALPHA5_DROPS``); the client
  answered no agent request with an error;
- every tapped frame, both directions, is valid under the Aug and the Nov schema;
- the agent exits 0 once the client closes its stdin.
"""

from __future__ import annotations

import copy
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import schema_validation

from .expectations import check_common, check_report, last_stop, updates
from .peers import run_py_client
from .test_acp2_agent_vs_ts_client import ALL_KINDS, wire_updates

pytestmark = pytest.mark.interop

ACP2_TEST_AGENT = [sys.executable, "-m", "acp2", "test-agent"]

# As for the TS client, less ``cancel-permission`` (the Aug rule; ``-wait`` is Nov's)
# and ``kinds`` (acp2's word is ``all``, see the test below).
SCENARIOS = (
    "echo",
    "tools-reject",
    "cancel",
    "cancel-permission-wait",
    "resume",
    "list",
    "close",
    "ext",
    "fail",
)

#: What the alpha.5 models of the SDK drop from acp2's Nov traffic (the handler never
#: sees it): ``type`` on available commands (D-28) and the ``error`` of an idle with
#: stop reason ``error`` (D-12).
ALPHA5_DROPS = ("availableCommands[].type", "state_update idle .error")


def alpha5_view(update: dict[str, Any]) -> dict[str, Any]:
    """``update`` as the SDK's alpha.5 models hand it over (see ``ALPHA5_DROPS``)."""
    seen = copy.deepcopy(update)
    for command in seen.get("availableCommands") or []:
        command.pop("type", None)
    if seen.get("sessionUpdate") == "state_update" and seen.get("state") == "idle":
        seen.pop("error", None)
    return seen


def assert_accepted(report: dict[str, Any], log: Path) -> None:
    """The SDK took every message as sent (less ``ALPHA5_DROPS``), the wire is valid."""
    expected = [
        {"sessionId": u["sessionId"], "update": alpha5_view(u["update"])}
        for u in wire_updates(report)
    ]
    assert report["sdkUpdates"] == expected, "the SDK's handler did not receive the updates"
    refused = [e for e in report["events"] if e["type"] == "answer" and "error" in e]
    assert refused == [], f"the Python client answered agent requests with errors: {refused}"
    result = schema_validation.check_log(log)
    assert result.problems == []
    assert result.frames == len(report["events"]), "the tap and the client saw different traffic"
    assert report["agentExit"] == {"code": 0, "signal": None}


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_py_client_drives_acp2_test_agent(py_sdk_v2: Path, tmp_path: Path, scenario: str) -> None:
    log = tmp_path / "wire.jsonl"
    report = run_py_client(py_sdk_v2, scenario, ACP2_TEST_AGENT, tap_log=log, cwd=tmp_path)

    check_report(report)
    assert_accepted(report, log)


def test_py_sdk_accepts_every_update_kind_of_acp2_test_agent(
    py_sdk_v2: Path, tmp_path: Path
) -> None:
    log = tmp_path / "wire.jsonl"
    report = run_py_client(
        py_sdk_v2, "tools-allow", ACP2_TEST_AGENT, tap_log=log, cwd=tmp_path, prompt="all"
    )

    check_report(report)  # the permission-gated tool flow of "all", allowed
    kinds = {u.get("sessionUpdate") for u in updates(report)}
    assert kinds >= ALL_KINDS, f"missing: {sorted(ALL_KINDS - kinds)}"
    assert_accepted(report, log)


def test_py_sdk_takes_acp2_test_agents_background_work_frames(
    py_sdk_v2: Path, tmp_path: Path
) -> None:
    """RFD "v2 Background Work": the SDK (alpha.5 models) takes every frame of acp2's
    detached items, dropping only the fields it does not know (``background``,
    ``capabilities``); every frame is valid under both drafts. (The SDK has no
    ``tool_call/cancel``: the cancels are exercised with the TypeScript client.)"""
    log = tmp_path / "wire.jsonl"
    report = run_py_client(
        py_sdk_v2, "echo", ACP2_TEST_AGENT, tap_log=log, cwd=tmp_path, prompt="background"
    )

    check_common(report)
    assert last_stop(report) == "end_turn"
    listed = [u.get("background") for u in updates(report, "state_update")]
    assert [item["type"] for item in listed[-1]] == ["tool_call", "terminal"]
    # Alpha.5 predates background work: its models drop both fields, nothing else.
    dropped = [
        {"sessionId": u["sessionId"], "update": _pre_background(u["update"])}
        for u in wire_updates(report)
    ]
    assert report["sdkUpdates"] == dropped
    assert schema_validation.check_log(log).problems == []
    assert report["agentExit"] == {"code": 0, "signal": None}


def _pre_background(update: dict[str, Any]) -> dict[str, Any]:
    """``update`` as alpha.5 hands it over: no ``background``, no ``capabilities``."""
    seen = alpha5_view(update)
    seen.pop("background", None)
    seen.pop("capabilities", None)
    return seen


def test_py_client_drives_acp2_coding_agent_through_a_full_turn(
    py_sdk_v2: Path, tmp_path: Path
) -> None:
    from acp2.coder.sample import copy_sample_project

    project = copy_sample_project(tmp_path / "project")
    agent = [
        *(sys.executable, "-m", "acp2", "agent", "--model", "scripted", "--pace", "0"),
        *("--store", str(tmp_path / "history.sqlite")),
    ]
    log = tmp_path / "wire.jsonl"

    report = run_py_client(
        py_sdk_v2,
        "tools-allow",  # every permission answered with its allow_once option
        agent,
        tap_log=log,
        cwd=project,
        prompt="Fix the failing test.",
        timeout=60,
    )

    check_common(report)
    assert last_stop(report) == "end_turn"
    assert report["permissions"], "the coding agent asked no permission"
    assert all(p["outcome"]["outcome"] == "selected" for p in report["permissions"])
    kinds = {u.get("sessionUpdate") for u in updates(report)}
    assert {"plan_update", "tool_call_update", "agent_message_chunk", "usage_update"} <= kinds
    last_status = {
        u["toolCallId"]: u["status"] for u in updates(report, "tool_call_update") if u.get("status")
    }
    assert set(last_status.values()) == {"completed"}, last_status
    after = subprocess.run(
        [sys.executable, "-m", "unittest"], cwd=project, capture_output=True, timeout=60
    )
    assert after.returncode == 0, after.stderr.decode(errors="replace")[-2000:]
    assert_accepted(report, log)

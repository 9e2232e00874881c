"""The official TypeScript SDK 2.4.0 v2 client (``ts/client.mjs``) drives acp2's agents.

``acp2 test-agent`` runs every client scenario whose words it shares with the TS agent
(its ``stream`` separator and its ``all`` scenario differ: the checks accept both
separators, and ``all`` is sent with ``--prompt``); ``acp2 agent --model scripted``
runs a full turn on a copy of the sample project. Each run goes through the wire tap:

- ``check_report``: the lifecycle and the scenario's contract, as the client saw it;
- the SDK's ``session/update`` handler received every update exactly as it was sent
  (nothing dropped by the SDK's validators, nothing altered), and the client answered
  no agent request with an error;
- every tapped frame, both directions, is valid under the Aug and the Nov schema
  (sampled for the long stream, see ``schema_validation.check_log``);
- the agent exits 0 once the client closes its stdin.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import schema_validation
from helpers import timeouts

from .expectations import check_common, check_report, last_stop, updates
from .peers import run_ts_client

pytestmark = pytest.mark.interop

ACP2_TEST_AGENT = [sys.executable, "-m", "acp2", "test-agent"]

# The TS client scenarios acp2 test-agent understands as they are (``kinds`` has no
# counterpart: acp2's ``all`` sends no Nov-only kinds; see the ``all`` test below).
SCENARIOS = (
    "echo",
    "tools-allow",
    "tools-reject",
    "cancel",
    "cancel-permission",
    "cancel-permission-wait",
    "resume",
    "list",
    "close",
    "ext",
    "fail",
)

# What acp2 test-agent's ``all`` scenario sends (every update kind acp2 has a model for).
ALL_KINDS = {
    "user_message",
    "state_update",
    "agent_thought_chunk",
    "plan_update",
    "tool_call_update",
    "tool_call_content_chunk",
    "terminal_update",
    "terminal_output_chunk",
    "usage_update",
    "agent_message_chunk",
    "agent_message",
    "available_commands_update",
    "session_info_update",
    "_acp2/custom",
}


def wire_updates(report: dict[str, Any]) -> list[dict[str, Any]]:
    """The ``session/update`` params as they crossed the wire, in order."""
    return [
        {"sessionId": e["sessionId"], "update": e["update"]}
        for e in report["events"]
        if e["type"] == "update"
    ]


#: Keys the Preview added to known updates that the TS SDK 2.4 schema does not model:
#: valid extra keys under every draft, which its validation accepts and strips. The
#: coding agent sends ``usage`` on its idles (Preview, rfds/end-turn-token-usage).
PREVIEW_KEYS = {"state_update": frozenset({"usage"})}


def as_ts_sdk_2_4_keeps(params: dict[str, Any]) -> dict[str, Any]:
    """``params`` without the :data:`PREVIEW_KEYS` the TS SDK 2.4 strips (nothing else)."""
    update = params["update"]
    extra = PREVIEW_KEYS.get(update.get("sessionUpdate"), frozenset())
    if not extra & update.keys():
        return params
    return {**params, "update": {k: v for k, v in update.items() if k not in extra}}


def assert_accepted(report: dict[str, Any], log: Path, *, sampled: bool = False) -> None:
    """The TS SDK took every message as sent (but for the Preview's extra keys it does not
    model), and the whole wire is valid in both drafts."""
    assert report["sdkUpdates"] == [as_ts_sdk_2_4_keeps(u) for u in wire_updates(report)], (
        "the TypeScript SDK's handler did not receive the updates exactly as sent"
    )
    refused = [e for e in report["events"] if e["type"] == "answer" and "error" in e]
    assert refused == [], f"the TS client answered agent requests with errors: {refused}"
    assert not [e for e in report["events"] if e["type"] == "invalid"]
    result = schema_validation.check_log(log)
    assert result.problems == []
    assert result.frames == len(report["events"]), "the tap and the client saw different traffic"
    assert result.sampled == sampled
    assert report["agentExit"]["code"] == 0, (
        f"the agent did not exit cleanly: {report['agentExit']}"
    )


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_ts_client_drives_acp2_test_agent(ts_sdk: Path, tmp_path: Path, scenario: str) -> None:
    log = tmp_path / "wire.jsonl"
    report = run_ts_client(ts_sdk, scenario, ACP2_TEST_AGENT, tap_log=log, cwd=tmp_path)

    check_report(report)
    assert_accepted(report, log)


def test_ts_client_cancels_acp2_test_agents_background_work(ts_sdk: Path, tmp_path: Path) -> None:
    """RFD "v2 Background Work" (TC-13, TM-10): the SDK takes every frame as sent, and its
    ``tool_call/cancel`` / ``terminal/cancel`` each end one item. Aug has neither method,
    so the wire is validated under Nov, and its session updates under Aug too."""
    log = tmp_path / "wire.jsonl"
    report = run_ts_client(ts_sdk, "background", ACP2_TEST_AGENT, tap_log=log, cwd=tmp_path)

    check_report(report)
    assert [item["type"] for item in report["extra"]["listed"]] == ["tool_call", "terminal"]
    assert report["sdkUpdates"] == wire_updates(report)
    assert schema_validation.check_log(log, ("nov",)).problems == []
    only_updates = tmp_path / "updates.jsonl"
    lines = log.read_text().splitlines()
    only_updates.write_text("".join(f"{line}\n" for line in lines if "session/update" in line))
    assert schema_validation.check_log(only_updates, ("aug",)).problems == []
    assert report["agentExit"]["code"] == 0


def test_ts_client_takes_a_stream_too_long_to_validate_whole_from_acp2_test_agent(
    ts_sdk: Path, tmp_path: Path
) -> None:
    log = tmp_path / "wire.jsonl"
    # Past the sampling bar, and about a megabyte on the pipe (10 000 took 48 s under load).
    count = schema_validation.FULL_LIMIT + 1000
    report = run_ts_client(
        ts_sdk,
        "stream",
        ACP2_TEST_AGENT,
        tap_log=log,
        cwd=tmp_path,
        count=count,
        timeout=timeouts.RUN_TIMEOUT,
    )

    check_report(report)
    assert len(updates(report, "agent_message_chunk")) == count
    assert_accepted(report, log, sampled=True)


def test_ts_sdk_accepts_every_update_kind_of_acp2_test_agent(ts_sdk: Path, tmp_path: Path) -> None:
    log = tmp_path / "wire.jsonl"
    report = run_ts_client(
        ts_sdk, "tools-allow", ACP2_TEST_AGENT, tap_log=log, cwd=tmp_path, prompt="all"
    )

    check_report(report)  # the permission-gated tool flow of "all", allowed
    kinds = {u.get("sessionUpdate") for u in updates(report)}
    assert kinds >= ALL_KINDS, f"missing: {sorted(ALL_KINDS - kinds)}"
    commands = [
        c for u in updates(report, "available_commands_update") for c in u["availableCommands"]
    ]
    assert commands, "no available commands"
    assert all(c.get("type") == "command" for c in commands), commands  # D-28
    assert_accepted(report, log)


def test_unknown_update_and_meta_reach_the_ts_sdk_unchanged(ts_sdk: Path, tmp_path: Path) -> None:
    log = tmp_path / "wire.jsonl"
    report = run_ts_client(ts_sdk, "ext", ACP2_TEST_AGENT, tap_log=log, cwd=tmp_path)

    check_report(report)
    received = [p["update"] for p in report["sdkUpdates"]]
    assert {
        "sessionUpdate": "_acp2/custom",
        "payload": {"n": 1, "text": "custom"},
    } in received
    info = [u for u in received if u["sessionUpdate"] == "session_info_update"]
    assert [u.get("_meta") for u in info] == [{"acp2.test": {"keep": True}}]
    # acp2 test-agent has no "_acp2/echo": an unknown extension request is -32601.
    assert report["extra"]["echoError"]["code"] == -32601
    assert_accepted(report, log)


def test_ts_client_drives_acp2_coding_agent_through_a_full_turn(
    ts_sdk: Path, tmp_path: Path
) -> None:
    from acp2.coder.sample import copy_sample_project

    project = copy_sample_project(tmp_path / "project")
    agent = [
        *(sys.executable, "-m", "acp2", "agent", "--model", "scripted", "--pace", "0"),
        *("--store", str(tmp_path / "history.sqlite")),
    ]
    log = tmp_path / "wire.jsonl"
    before = subprocess.run(
        [sys.executable, "-m", "unittest"],
        cwd=project,
        capture_output=True,
        timeout=timeouts.RUN_TIMEOUT,
    )
    assert before.returncode != 0, "the sample project's tests should fail before the fix"

    report = run_ts_client(
        ts_sdk,
        "tools-allow",  # every permission answered with its allow_once option
        agent,
        tap_log=log,
        cwd=project,
        prompt="Fix the failing test.",
        timeout=timeouts.RUN_TIMEOUT,
    )

    check_common(report)
    assert last_stop(report) == "end_turn"
    assert report["permissions"], "the coding agent asked no permission"
    assert all(p["outcome"]["outcome"] == "selected" for p in report["permissions"])
    kinds = {u.get("sessionUpdate") for u in updates(report)}
    assert {"plan_update", "tool_call_update", "agent_message_chunk", "usage_update"} <= kinds
    last_status: dict[str, str] = {}
    for u in updates(report, "tool_call_update"):
        if u.get("status"):
            last_status[u["toolCallId"]] = u["status"]
    assert last_status, "no tool calls"
    assert set(last_status.values()) == {"completed"}, last_status
    after = subprocess.run(
        [sys.executable, "-m", "unittest"],
        cwd=project,
        capture_output=True,
        timeout=timeouts.RUN_TIMEOUT,
    )
    assert after.returncode == 0, after.stderr.decode(errors="replace")[-2000:]
    assert_accepted(report, log)

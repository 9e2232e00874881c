"""The Python SDK 0.12.1 (ACP v1) test client against its test agent, through the tap.

This pins the v1 peers themselves, so a failure against acp2 is acp2's, not theirs.
Every frame, both directions, must be valid under the vendored v1 schema.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .peers import py_agent_argv, run_py_client
from .v1_expectations import CHECKS, check_v1_report
from .v1_schema import validate_v1_log
from .wire import read_log

pytestmark = pytest.mark.interop

# A subset keeps the suite fast (each SDK process takes ~1 s to import): a turn, a
# permission, a cancel during it, a load, every update kind. Every scenario runs against
# acp2 in test_acp2_client_vs_py_v1_agent.py and test_py_v1_client_vs_acp2_agent.py,
# and all of them passed pair against pair when they were written.
PAIR_SCENARIOS = ("echo", "tools-allow", "cancel-permission", "load", "kinds")


def test_the_pair_subset_names_known_scenarios() -> None:
    assert set(PAIR_SCENARIOS) <= set(CHECKS)


@pytest.mark.parametrize("scenario", PAIR_SCENARIOS)
def test_py_v1_client_and_py_v1_agent_complete_the_scenario(
    py_sdk_v1: Path, tmp_path: Path, scenario: str
) -> None:
    log = tmp_path / "wire.jsonl"
    agent = py_agent_argv(py_sdk_v1, "v1")

    report = run_py_client(py_sdk_v1, scenario, agent, tap_log=log, version="v1", cwd=tmp_path)

    check_v1_report(report)
    assert len(read_log(log)) == len(report["events"]), (
        "the tap and the client saw different traffic"
    )
    assert report["agentExit"] == {"code": 0, "signal": None}
    assert validate_v1_log(log) == []


def test_the_v1_validator_rejects_v2_frames(tmp_path: Path) -> None:
    log = tmp_path / "wire.jsonl"
    frames = [
        (
            "client->agent",
            {"jsonrpc": "2.0", "id": 1, "method": "session/prompt"}
            | {"params": {"sessionId": "s", "prompt": [{"type": "text", "text": "hi"}]}},
        ),
        ("agent->client", {"jsonrpc": "2.0", "id": 1, "result": {"messageId": "m"}}),
        (
            "agent->client",
            {"jsonrpc": "2.0", "method": "session/update"}
            | {
                "params": {
                    "sessionId": "s",
                    "update": {"sessionUpdate": "state_update", "state": "idle"},
                }
            },
        ),
    ]
    log.write_text(
        "".join(
            json.dumps({"seq": i, "t": 0.0, "dir": d, "line": json.dumps(m)}) + "\n"
            for i, (d, m) in enumerate(frames)
        )
    )

    problems = validate_v1_log(log)

    assert len(problems) == 2, problems
    assert "'stopReason' is a required property" in problems[0]
    assert "state_update" in problems[1]

"""The Python SDK 0.12.1 v1 client drives the TypeScript SDK's v2 agent through
``acp2 bridge`` (the front direction: a v2 agent presented as v1).

The wire is tapped on both sides of the bridge. The client's side is checked under the
vendored v1 schema. On the agent's side the bridge first sends the client's own v1
``initialize`` unchanged (a v1 agent would take it as it is); the TypeScript agent
refuses that version (``-32022``), so the bridge initializes it with the translated v2
request: that first exchange is checked as v1, everything after it under both v2 drafts.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

import schema_validation
from helpers.timeouts import RUN_TIMEOUT as TIMEOUT

from . import v1_expectations
from .peers import run_py_client, tap_argv, ts_agent_argv
from .test_py_v1_client_vs_acp2_agent import tools_allowed
from .v1_schema import validate_v1_log
from .wire import read_log

pytestmark = pytest.mark.interop


SCENARIOS = ("echo", "tools-allow", "tools-reject", "cancel", "cancel-permission")

CHECKS = v1_expectations.CHECKS | {"tools-allow": tools_allowed}


def bridged(log: Path, agent_argv: list[str]) -> list[str]:
    """``acp2 bridge`` in front of ``agent_argv``, whose wire is tapped into ``log``."""
    return [sys.executable, "-m", "acp2", "bridge", "--", *tap_argv(log, agent_argv)]


def split_log(log: Path, first: int, head: Path, tail: Path) -> None:
    """Write the first ``first`` records of a tap log to ``head``, the others to ``tail``."""
    records = [line for line in log.read_text(encoding="utf-8").splitlines() if line.strip()]
    head.write_text("".join(r + "\n" for r in records[:first]), encoding="utf-8")
    tail.write_text("".join(r + "\n" for r in records[first:]), encoding="utf-8")


def probe_exchange(log: Path) -> list[dict[str, Any]]:
    frames = read_log(log)
    return [frames[0].message, frames[1].message]


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_py_v1_client_drives_the_ts_v2_agent_through_acp2_bridge(
    ts_sdk: Path, py_sdk_v1: Path, tmp_path: Path, scenario: str
) -> None:
    client_side, agent_side = tmp_path / "v1.jsonl", tmp_path / "v2.jsonl"
    agent = bridged(agent_side, ts_agent_argv(ts_sdk))

    report = run_py_client(
        py_sdk_v1,
        scenario,
        agent,
        tap_log=client_side,
        version="v1",
        cwd=tmp_path,
        timeout=TIMEOUT,
    )

    v1_expectations.check_v1_common(report)
    CHECKS[scenario](report)
    assert report["initialize"]["agentInfo"]["name"] == "acp2-interop-ts-agent"
    assert report["agentExit"] == {"code": 0, "signal": None}
    assert validate_v1_log(client_side) == []
    probe, refusal = probe_exchange(agent_side)
    sent = json.loads(read_log(client_side)[0].line)
    assert probe == sent  # the client's initialize, as it was
    assert refusal["error"]["code"] == -32022
    head, tail = tmp_path / "probe.jsonl", tmp_path / "v2-after.jsonl"
    split_log(agent_side, 2, head, tail)
    assert validate_v1_log(head) == []
    assert schema_validation.validate_log(tail) == []
    (initialize, *_) = read_log(tail)
    assert initialize.message["params"]["protocolVersion"] == 2

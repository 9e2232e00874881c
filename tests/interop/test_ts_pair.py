"""The TypeScript test client against the TypeScript test agent, through the wire tap.

This pins the peers themselves (so a failure against acp2 is acp2's, not the peers')
and records what the official SDK actually sends: every frame must be valid under the
Nov schema the SDK ships, and is checked under Aug too.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import schema_validation
from helpers import timeouts

from .expectations import check_report
from .peers import SCENARIOS, run_ts_client, ts_agent_argv
from .wire import read_log, session_updates

pytestmark = pytest.mark.interop

VENDORED_NOV = Path(schema_validation.SCHEMA_DIR) / "acp-v2-nov.json"
SDK_DIR = Path("node_modules") / "@agentclientprotocol" / "sdk"

# What the pinned TS pair sends that the Aug schema rejects, per scenario. Nothing:
# every Nov-only field it uses is an extra property (no Aug definition closes its
# objects) and every Nov-only variant lands in an Aug "other" fallback. See the
# Aug-vs-Nov notes in README.md.
AUG_PROBLEMS: dict[str, list[str]] = {}


def strip_descriptions(node: Any) -> Any:
    """``node`` without its ``description`` annotations (string values), recursively:
    the transformation that produced the vendored copies. A *property* named
    ``description`` (an object schema) is kept."""
    if isinstance(node, dict):
        return {
            k: strip_descriptions(v)
            for k, v in node.items()
            if not (k == "description" and isinstance(v, str))
        }
    if isinstance(node, list):
        return [strip_descriptions(v) for v in node]
    return node


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_ts_client_and_ts_agent_complete_the_scenario(
    ts_sdk: Path, tmp_path: Path, scenario: str
) -> None:
    log = tmp_path / "wire.jsonl"
    report = run_ts_client(ts_sdk, scenario, ts_agent_argv(ts_sdk), tap_log=log, cwd=tmp_path)

    check_report(report)
    frames = read_log(log)
    assert len(frames) == len(report["events"]), "the tap and the client saw different traffic"
    assert [u["sessionUpdate"] for u in session_updates(frames)] == [
        e["update"]["sessionUpdate"] for e in report["events"] if e["type"] == "update"
    ]
    assert schema_validation.validate_log(log, ("nov",)) == []
    assert schema_validation.validate_log(log, ("aug",)) == AUG_PROBLEMS.get(scenario, [])


@pytest.mark.slow
def test_a_stream_too_long_to_validate_whole_is_tapped_and_sampled(
    ts_sdk: Path, tmp_path: Path
) -> None:
    log = tmp_path / "wire.jsonl"
    # Past the sampling bar, not far past it: the tap and the validator do the same per
    # frame at any count (20 000 took a minute under load, and timed out at times).
    count = schema_validation.FULL_LIMIT + 1000
    report = run_ts_client(
        ts_sdk,
        "stream",
        ts_agent_argv(ts_sdk),
        tap_log=log,
        cwd=tmp_path,
        count=count,
        timeout=timeouts.RUN_TIMEOUT,
    )

    check_report(report)
    result = schema_validation.check_log(log)
    assert result.problems == []
    assert result.frames == len(report["events"]) >= count
    assert result.sampled
    assert result.validated < result.frames


def test_the_vendored_nov_schema_is_the_installed_sdk_schema(ts_sdk: Path) -> None:
    installed = json.loads((ts_sdk / SDK_DIR / "schema" / "v2" / "schema.json").read_text())
    vendored = json.loads(VENDORED_NOV.read_text())

    assert strip_descriptions(installed) == vendored


def test_the_installed_sdk_is_the_pinned_version(ts_sdk: Path) -> None:
    package = json.loads((ts_sdk / SDK_DIR / "package.json").read_text())

    assert package["version"] == "2.4.0"

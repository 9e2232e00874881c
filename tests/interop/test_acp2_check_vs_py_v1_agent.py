"""``acp2 check`` judges the official Python SDK 0.12.1 v1 agent as ACP v1.

The agent answers ``initialize`` (asked for 2) with protocol version 1 in v1's shape, so
the report says it judged ACP v1 and runs the v1 requirement set: handshake, session/new,
prompt/response pairing, cancel, permission requests, session/load, JSON-RPC hygiene,
and every frame against the v1 schema. Every FAIL is a deviation of the SDK, not of the
test agent's handlers, and not a checker error; ``SDK_FAILURES`` names them, and the
second test sends the same inputs to the agent directly and pins the frames:

- V1-TR-13:json: a line that is not JSON is logged and skipped: no ``-32700``.
- V1-TR-13:request: an object that is not a request (``method`` not a string) is
  dropped: no ``-32600``.

Both are the SDK's JSON-RPC layer, which its 1.0.0rc3 v2 agent shares (the same rows
fail there, see test_acp2_check_vs_py_agent.py).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from .peers import agent_answers, py_agent_argv

pytestmark = pytest.mark.interop

PROMPTS = ("--prompt", "echo hello", "--cancel-prompt", "wait", "--permission-prompt", "tools")
SDK_FAILURES = {"V1-TR-13:json": "MUST", "V1-TR-13:request": "MUST"}


@pytest.fixture(scope="module")
def judged(py_sdk_v1: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("check-v1")
    report = folder / "check.json"
    argv = [sys.executable, "-m", "acp2", "check", "--plain", "--json", str(report), *PROMPTS]
    argv += ["--cwd", str(folder), "--", *py_agent_argv(py_sdk_v1, "v1")]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300, cwd=folder)
    assert done.returncode == 1, f"acp2 check could not run, or found no failure:\n{done.stderr}"
    result: dict[str, Any] = json.loads(report.read_text())
    result["stdout"] = done.stdout
    return result


def test_acp2_check_judges_the_py_v1_agent_as_v1_and_fails_it_only_where_the_sdk_deviates(
    judged: dict[str, Any],
) -> None:
    failing = {r["key"]: r["level"] for r in judged["rows"] if r["result"] == "FAIL"}

    assert judged["draft"] == "v1"
    assert "judged as ACP v1 (the agent answered protocol version 1)" in judged["stdout"]
    assert judged["agent"]["info"]["name"] == "acp2-interop-py-v1-agent"
    assert failing == SDK_FAILURES, judged["stdout"]
    assert not judged["conformant"]
    assert all(r["drafts"] == ["v1"] for r in judged["rows"])
    passed = {r["key"] for r in judged["rows"] if r["result"] == "PASS"}
    # The turn rows, the permission rows (a tool call, then the request), load (the agent
    # advertises loadSession) and schema validity under v1.
    turns = {"V1-PL-01", "V1-PL-02", "V1-PL-04", "V1-PL-06", "V1-PR-01", "V1-PL-04:permission"}
    assert {*turns, "V1-SS-02", "V1-SCHEMA"} <= passed
    assert judged["counts"]["SKIP"] == 0


@pytest.mark.anyio
async def test_the_sdk_answers_no_malformed_input_and_answers_1_to_every_version(
    py_sdk_v1: Path, tmp_path: Path
) -> None:
    """The frames behind the FAIL rows, from the agent itself: two malformed lines get
    no answer; initialize asking for 2 and for 65535 is answered 1 in v1's shape."""
    log = tmp_path / "wire.jsonl"
    info = {"name": "probe", "version": "0"}
    initialize = {"jsonrpc": "2.0", "method": "initialize"}
    lines = [
        "{not json",
        json.dumps({"jsonrpc": "2.0", "method": 1, "params": "bar"}),
        json.dumps({**initialize, "id": 1, "params": {"protocolVersion": 2, "info": info}}),
        json.dumps({**initialize, "id": 2, "params": {"protocolVersion": 65535}}),
    ]
    answers = await agent_answers(py_agent_argv(py_sdk_v1, "v1"), log, lines, 2)
    assert [a["id"] for a in answers] == [1, 2], answers
    for answer in answers:
        assert answer["result"]["protocolVersion"] == 1
        assert "info" not in answer["result"]
        assert answer["result"]["agentInfo"]["name"] == "acp2-interop-py-v1-agent"

"""``acp2 check --draft nov`` judges the official Python SDK 1.0.0rc3 v2 agent.

Every FAIL it prints is a deviation of the SDK (``acp.experimental.v2``, alpha.5), not
of the test agent's handlers, and not a checker error. ``SDK_FAILURES`` names them; the
second test sends the same inputs to the agent directly and pins the frames:

- IN-04:65535, IN-04:1:nov: the SDK's initialization state answers any
  ``protocolVersion`` other than 2 with ``-32602`` (data ``{expectedProtocolVersion: 2,
  receivedProtocolVersion}``) before the agent's ``initialize`` handler runs, instead
  of the agent's newest version (65535) or a version <= 1 / ``-32022`` (1, Nov D-05).
- TR-13:json: a line that is not JSON is logged and skipped: no ``-32700``.
- TR-13:request: an object that is neither request, notification nor response
  (no ``method``, no ``id``) is dropped: no ``-32600``.
- TR-14:empty and D-01:nov (SHOULD): a batch, empty or not, is "ignored as a non-object
  message": no ``-32600`` (nothing in it runs, which Nov wants).

Under the Aug draft (`--draft aug`) the same rows fail, with the Aug variants of the draft
rows (IN-04:1:aug, TR-14:mixed) instead of the Nov ones (measured, not tested here: one
run of the checker takes about 30 s).
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
SDK_FAILURES = {
    "IN-04:65535": "MUST",
    "IN-04:1:nov": "MUST",
    "TR-13:json": "MUST",
    "TR-13:request": "MUST",
    "TR-14:empty": "MUST",
    "D-01:nov": "SHOULD",
}


@pytest.fixture(scope="module")
def nov(py_sdk_v2: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("check-nov")
    report = folder / "check.json"
    argv = [sys.executable, "-m", "acp2", "check", "--plain", "--json", str(report), *PROMPTS]
    argv += ["--draft", "nov", "--cwd", str(folder), "--", *py_agent_argv(py_sdk_v2)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300, cwd=folder)
    assert done.returncode == 1, f"acp2 check could not run, or found no failure:\n{done.stderr}"
    result: dict[str, Any] = json.loads(report.read_text())
    result["stdout"] = done.stdout
    return result


def test_acp2_check_fails_the_py_agent_only_where_the_sdk_deviates(nov: dict[str, Any]) -> None:
    failing = {r["key"]: r["level"] for r in nov["rows"] if r["result"] == "FAIL"}

    assert nov["draft"] == "nov"
    assert nov["agent"]["info"]["name"] == "acp2-interop-py-agent"
    assert failing == SDK_FAILURES, nov["stdout"]
    assert not nov["conformant"]
    assert nov["counts"]["PASS"] > 40
    versions = [r for r in nov["rows"] if r["key"] in ("IN-04:65535", "IN-04:1:nov")]
    assert all('"code":-32602' in r["evidence"][0] for r in versions), versions


def test_the_py_agent_fails_under_the_preview_only_where_it_fails_under_nov(
    nov: dict[str, Any],
) -> None:
    """The Preview (as modelled) is every Nov rule plus its own schema row, judged in the
    same run: the agent passes that row, so its Preview failures are its Nov failures."""
    other = {r["key"]: r["result"] for r in nov["other_draft_rows"]}
    assert other.get("SCHEMA:preview") == "PASS", nov["stdout"]


@pytest.mark.anyio
async def test_the_sdk_answers_no_malformed_input_and_refuses_other_versions(
    py_sdk_v2: Path, tmp_path: Path
) -> None:
    """The frames behind the FAIL rows, from the agent itself: four malformed lines
    get no answer, version 65535 gets -32602, version 2 then succeeds."""
    log = tmp_path / "wire.jsonl"
    info = {"name": "probe", "version": "0"}
    initialize = {"jsonrpc": "2.0", "method": "initialize"}
    lines = [
        "{not json",
        json.dumps({"jsonrpc": "2.0"}),
        "[]",
        json.dumps([{"jsonrpc": "2.0", "method": "_acp2/x"}]),
        json.dumps({**initialize, "id": 1, "params": {"protocolVersion": 65535, "info": info}}),
        json.dumps({**initialize, "id": 2, "params": {"protocolVersion": 2, "info": info}}),
    ]
    answers = await agent_answers(py_agent_argv(py_sdk_v2), log, lines, 2)
    assert [a["id"] for a in answers] == [1, 2], answers
    assert answers[0]["error"]["code"] == -32602
    assert answers[0]["error"]["data"] == {
        "expectedProtocolVersion": 2,
        "receivedProtocolVersion": 65535,
    }
    assert answers[1]["result"]["protocolVersion"] == 2

"""A spawned agent answers ``initialize`` before it imports the session runtime
(``acp2.agent.early``, issue 16): the answer is the connection's own, anything that is
not a v2 ``initialize`` is left to the connection, and the rest of the stream is served.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from helpers.timeouts import RUN_TIMEOUT as TIMEOUT

INFO = {"name": "acp2-tests", "version": "0"}


def line(rid: Any, method: str, params: dict[str, Any]) -> bytes:
    message = {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}
    return json.dumps(message, separators=(",", ":")).encode() + b"\n"


def initialize(rid: Any, version: int = 2) -> bytes:
    return line(rid, "initialize", {"protocolVersion": version, "info": INFO, "capabilities": {}})


def run_test_agent(stdin: bytes) -> list[dict[str, Any]]:
    """Run ``acp2 test-agent`` on ``stdin`` (then end of input); its answers in order."""
    done = subprocess.run(
        [sys.executable, "-m", "acp2", "test-agent"],
        input=stdin,
        capture_output=True,
        timeout=TIMEOUT,
        check=True,
    )
    return [json.loads(raw) for raw in done.stdout.splitlines()]


def test_the_first_initialize_is_answered_exactly_as_the_connection_answers_a_later_one() -> None:
    early, later = run_test_agent(initialize(1) + initialize("two"))
    assert early["id"] == 1
    assert later["id"] == "two"
    assert early["result"] == later["result"]
    assert early["result"]["protocolVersion"] == 2


def test_requests_read_together_with_the_initialize_are_served_after_it() -> None:
    stdin = initialize(1) + line(2, "session/new", {"cwd": "/tmp"})
    answers = run_test_agent(stdin)
    assert [a["id"] for a in answers] == [1, 2]
    assert answers[1]["result"]["sessionId"]


def test_an_initialize_with_bad_params_is_left_to_the_connection_which_rejects_it() -> None:
    bad = line(1, "initialize", {"protocolVersion": 2, "capabilities": {}})  # no info
    answers = run_test_agent(bad + initialize(2) + line(3, "session/new", {"cwd": "/tmp"}))
    assert answers[0]["id"] == 1
    assert answers[0]["error"]["code"] == -32602
    assert answers[1]["result"]["protocolVersion"] == 2
    assert "sessionId" in answers[2]["result"]


def test_a_first_request_other_than_initialize_is_refused_by_the_connection() -> None:
    answers = run_test_agent(line(1, "session/new", {"cwd": "/tmp"}) + initialize(2))
    assert answers[0]["error"]["code"] == -32600
    assert answers[1]["result"]["protocolVersion"] == 2


def test_a_v1_initialize_first_is_still_answered_by_the_v1_front_bridge() -> None:
    v1 = line(1, "initialize", {"protocolVersion": 1, "clientCapabilities": {}})
    (answer,) = run_test_agent(v1)
    assert answer["result"]["protocolVersion"] == 1
    assert "agentCapabilities" in answer["result"]


# What the agent process holds once initialize is answered: the configuration, the
# wire models and msgspec -- not the event loop, anyio, SQLite or the session runtime.
ANSWER_SCRIPT = """
import json, sys
from acp2.agent.early import answer_stdin
from acp2.testing.scenarios import build_test_agent
head, request = answer_stdin(build_test_agent())
assert request is not None and head == b""
print(json.dumps(sorted(sys.modules)), file=sys.stderr)
"""

ACP2_MODULES_AT_ANSWER = {
    "acp2",
    "acp2._lazy",
    "acp2.agent",
    "acp2.agent.app",
    "acp2.agent.capabilities",
    "acp2.agent.early",
    "acp2.agent.settings",
    "acp2.compat",
    "acp2.compat.v1",
    "acp2.compat.v1.negotiate",
    "acp2.errors",
    # The prompt-content rule (PL-02) the capabilities imply: pure, two small modules.
    "acp2.lifecycle",
    "acp2.lifecycle.prompt_content",
    # The envelope is read by the rpc layer's own sans-IO reader (no async library).
    "acp2.rpc",
    "acp2.rpc.envelope",
    "acp2.rpc.guarded",
    "acp2.rpc.messages",
    "acp2.schema",
    "acp2.testing",
    "acp2.testing.scenarios",
}
NOT_YET = (
    "asyncio",
    "anyio",
    "sqlite3",
    "acp2.rpc.connection",
    "acp2.rpc.peer",
    "acp2.state",
    "acp2.transport",
)


def test_answering_initialize_loads_only_the_configuration_and_the_wire_models() -> None:
    done = subprocess.run(
        [sys.executable, "-c", ANSWER_SCRIPT],
        input=initialize(1),
        capture_output=True,
        timeout=TIMEOUT,
        check=True,
    )
    assert json.loads(done.stdout)["result"]["protocolVersion"] == 2
    loaded = set(json.loads(done.stderr.splitlines()[-1]))
    ours = {m for m in loaded if m == "acp2" or m.startswith("acp2.")}
    assert {m for m in ours if not m.startswith("acp2.schema.")} == ACP2_MODULES_AT_ANSWER
    assert not [m for m in loaded for n in NOT_YET if m == n or m.startswith(n + ".")]

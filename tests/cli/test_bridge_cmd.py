"""``acp2 bridge`` as a process: pass-through byte for byte, the log, failures, teardown.

Every test runs the real command with real agents (``acp2 test-agent``, which answers v1
and v2 itself, or small shell / Python agents) and talks raw JSON lines to it. The wire
between the bridge and the agent is recorded with the interop suite's tap
(``tests/interop/tap.py``, standard library only).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.abc import Process

from acp2.transport.procgroup import group_alive
from helpers.processes import ACP2, isolated_env
from helpers.timeouts import PROCESS_TIMEOUT, SCENARIO_TIMEOUT

pytestmark = pytest.mark.anyio

TAP = Path(__file__).resolve().parents[1] / "interop" / "tap.py"
TEST_AGENT = [*ACP2, "test-agent"]

# Spacing no encoder of acp2's would write: a pass-through must keep it as it is.
V1_HELLO = (
    b'{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": '
    b'{"protocolVersion": 1, "clientInfo": {"name": "zed", "version": "0.200.0"}}}'
)
V2_HELLO = (
    b'{"jsonrpc":"2.0", "id":0, "method":"initialize", "params":{"protocolVersion":2, '
    b'"info":{"name":"a-v2-client","version":"1"}, "capabilities":{}}}'
)


class Bridge:
    """A running ``acp2 bridge``: lines in, lines out, every line kept."""

    def __init__(self, process: Process) -> None:
        self.process = process
        self.sent: list[bytes] = []
        self.received: list[bytes] = []
        self._buffer = b""

    async def send(self, line: bytes) -> None:
        assert self.process.stdin is not None
        self.sent.append(line)
        await self.process.stdin.send(line + b"\n")

    async def request(self, rid: int, method: str, params: Any) -> dict[str, Any]:
        message = {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}
        await self.send(json.dumps(message).encode())
        return await self.answer(rid)

    async def answer(self, rid: Any) -> dict[str, Any]:
        return await self.until(lambda f: f.get("id") == rid and "method" not in f)

    async def until(self, predicate: Any) -> dict[str, Any]:
        with anyio.fail_after(PROCESS_TIMEOUT):
            while True:
                frame: dict[str, Any] = json.loads(await self._line())
                if predicate(frame):
                    return frame

    async def _line(self) -> bytes:
        assert self.process.stdout is not None
        while b"\n" not in self._buffer:
            chunk = await self.process.stdout.receive()
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        self.received.append(line)
        return line

    async def close(self) -> tuple[int, str]:
        """Close the bridge's stdin; its exit status and stderr."""
        assert self.process.stdin is not None
        assert self.process.stderr is not None
        await self.process.stdin.aclose()
        with anyio.fail_after(PROCESS_TIMEOUT):
            code = await self.process.wait()
            err = b""
            async for chunk in self.process.stderr:
                err += chunk
        return code, err.decode(errors="replace")


async def open_bridge(tmp_path: Path, *options: str, agent: list[str]) -> Bridge:
    argv = [*ACP2, "bridge", *options, "--", *agent]
    process = await anyio.open_process(argv, env=isolated_env(tmp_path), cwd=tmp_path)
    return Bridge(process)


def tapped(log: Path, agent: list[str]) -> list[str]:
    return [sys.executable, str(TAP), "--log", str(log), "--", *agent]


def tap_lines(log: Path, direction: str) -> list[bytes]:
    records = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    return [r["line"].encode() for r in records if r["dir"] == direction]


async def one_turn(bridge: Bridge, hello: bytes, prompt: dict[str, Any]) -> None:
    await bridge.send(hello)
    await bridge.answer(0)
    new = await bridge.request(1, "session/new", {"cwd": "/tmp", "mcpServers": []})
    prompt["sessionId"] = new["result"]["sessionId"]
    answer = await bridge.request(2, "session/prompt", prompt)
    if "messageId" in answer["result"]:  # v2: the turn goes on until idle
        await bridge.until(is_idle)


def is_idle(frame: dict[str, Any]) -> bool:
    update = (frame.get("params") or {}).get("update") or {}
    return update.get("sessionUpdate") == "state_update" and update.get("state") == "idle"


@pytest.mark.parametrize(
    ("hello", "version"), [pytest.param(V1_HELLO, 1, id="v1"), pytest.param(V2_HELLO, 2, id="v2")]
)
async def test_same_version_frames_pass_through_byte_for_byte(
    tmp_path: Path, hello: bytes, version: int
) -> None:
    wire = tmp_path / "wire.jsonl"
    prompt = {"prompt": [{"type": "text", "text": "echo hi"}]}
    with anyio.fail_after(SCENARIO_TIMEOUT):
        bridge = await open_bridge(tmp_path, agent=tapped(wire, TEST_AGENT))
        await one_turn(bridge, hello, prompt)
        code, err = await bridge.close()

    assert (code, err) == (0, "")
    assert json.loads(bridge.received[0])["result"]["protocolVersion"] == version
    assert tap_lines(wire, "client->agent") == bridge.sent
    # The client stopped reading at the end of the turn; everything it read is the agent's.
    assert tap_lines(wire, "agent->client")[: len(bridge.received)] == bridge.received


async def test_the_log_has_every_frame_and_the_agents_stderr_and_the_terminal_nothing(
    tmp_path: Path,
) -> None:
    log = tmp_path / "bridge.log"
    agent = ["sh", "-c", 'echo "agent says hi" >&2; exec "$@"', "sh", *TEST_AGENT]
    with anyio.fail_after(SCENARIO_TIMEOUT):
        bridge = await open_bridge(tmp_path, "--log", str(log), agent=agent)
        await one_turn(bridge, V2_HELLO, {"prompt": [{"type": "text", "text": "echo hi"}]})
        code, err = await bridge.close()

    assert (code, err) == (0, "")
    records = log.read_text(encoding="utf-8").splitlines()
    fields = [r.split(" ", 3) for r in records]
    assert all(f[0].endswith("Z") for f in fields)
    assert ["agent-stderr", "-", "agent says hi"] in [f[1:] for f in fields]
    frames = [(f[1], f[2], f[3].encode()) for f in fields if f[1].endswith(("agent", "client"))]
    sent = [(d, v, line) for d, v, line in frames if d == "client->agent"]
    assert sent == [("client->agent", "v2", line) for line in bridge.sent]
    received = [line for d, _, line in frames if d == "agent->client"]
    assert received[: len(bridge.received)] == bridge.received


async def test_an_agent_exiting_before_it_answers_gets_the_client_an_error_and_its_status(
    tmp_path: Path,
) -> None:
    agent = ["sh", "-c", 'echo "model backend exploded" >&2; exit 3']
    with anyio.fail_after(SCENARIO_TIMEOUT):
        bridge = await open_bridge(tmp_path, agent=agent)
        await bridge.send(V1_HELLO)
        answer = await bridge.answer(0)
        code, err = await bridge.close()

    assert answer["error"]["code"] == -32603
    assert "exited with status 3" in answer["error"]["message"]
    assert code == 3
    assert "acp2 bridge: the agent exited with status 3 before answering initialize" in err
    assert "model backend exploded" in err


async def test_an_agent_that_cannot_start_is_a_clear_error_and_exit_127(tmp_path: Path) -> None:
    with anyio.fail_after(SCENARIO_TIMEOUT):
        bridge = await open_bridge(tmp_path, agent=[str(tmp_path / "no-such-agent")])
        await bridge.send(V2_HELLO)
        answer = await bridge.answer(0)
        code, err = await bridge.close()

    assert "command not found" in answer["error"]["message"]
    assert code == 127
    assert err.startswith("acp2 bridge: command not found")


DYING_AGENT = """
import json, sys
line = sys.stdin.readline()
rid = json.loads(line)["id"]
result = {"protocolVersion": 2, "info": {"name": "dying", "version": "1"}, "capabilities": {}}
print(json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}), flush=True)
sys.stdin.readline()
print("out of memory, bye", file=sys.stderr)
sys.exit(5)
"""


async def test_an_agent_dying_mid_session_ends_the_bridge_with_its_status(tmp_path: Path) -> None:
    with anyio.fail_after(SCENARIO_TIMEOUT):
        bridge = await open_bridge(tmp_path, agent=[sys.executable, "-c", DYING_AGENT])
        await bridge.send(V2_HELLO)
        await bridge.answer(0)
        await bridge.send(b'{"jsonrpc":"2.0","id":1,"method":"session/new","params":{}}')
        assert bridge.process.stderr is not None
        with anyio.fail_after(PROCESS_TIMEOUT):
            code = await bridge.process.wait()
        err = (await bridge.process.stderr.receive()).decode()

    assert code == 5
    assert "the agent exited with status 5 before the client closed the connection" in err
    assert "out of memory, bye" in err


async def test_closing_stdin_ends_the_bridge_and_the_agents_process_group(tmp_path: Path) -> None:
    pidfile = tmp_path / "agent.pid"
    # The agent leads its group; a helper it started would outlive a careless teardown.
    script = 'echo $$ > "$0"; sleep 300 & exec "$@"'
    agent = ["sh", "-c", script, str(pidfile), *TEST_AGENT]
    with anyio.fail_after(SCENARIO_TIMEOUT):
        bridge = await open_bridge(tmp_path, agent=agent)
        await bridge.send(V2_HELLO)
        await bridge.answer(0)
        code, err = await bridge.close()

    assert (code, err) == (0, "")
    assert not group_alive(int(pidfile.read_text()))


def test_a_missing_agent_command_is_a_usage_error(tmp_path: Path) -> None:
    done = subprocess.run(
        [*ACP2, "bridge", "--log", str(tmp_path / "x.log")],
        capture_output=True,
        text=True,
        timeout=PROCESS_TIMEOUT,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2
    assert "missing AGENT_COMMAND" in done.stderr


async def test_sigterm_stops_the_agents_process_group_and_exits_128_plus_15(
    tmp_path: Path,
) -> None:
    pidfile = tmp_path / "agent.pid"
    # An agent whose group ignores SIGTERM: the bridge still ends it (end of input, SIGKILL).
    script = 'echo $$ > "$0"; trap "" TERM; exec "$@"'
    agent = ["sh", "-c", script, str(pidfile), *TEST_AGENT]
    with anyio.fail_after(SCENARIO_TIMEOUT):
        bridge = await open_bridge(tmp_path, agent=agent)
        await bridge.send(V2_HELLO)
        await bridge.answer(0)
        bridge.process.terminate()
        code = await bridge.process.wait()

    assert code == 128 + 15
    assert not group_alive(int(pidfile.read_text()))


def test_the_terminal_flag_is_offered_exactly_when_the_back_bridge_serves_terminals() -> None:
    from acp2.bridge.translate import back_serves_terminals

    done = subprocess.run(
        [*ACP2, "bridge", "--help"], capture_output=True, text=True, timeout=PROCESS_TIMEOUT
    )
    assert done.returncode == 0
    assert ("--terminal" in done.stdout) == back_serves_terminals()
    assert "--fs" in done.stdout


async def test_a_long_stream_passes_through_whole_and_in_order(tmp_path: Path) -> None:
    count = 20_000  # many pipe-fulls: the bridge must wait for the client, not drop
    with anyio.fail_after(SCENARIO_TIMEOUT):
        bridge = await open_bridge(tmp_path, agent=TEST_AGENT)
        await one_turn(bridge, V2_HELLO, {"prompt": [{"type": "text", "text": f"stream {count}"}]})
        code, _ = await bridge.close()

    chunks = [
        json.loads(line)["params"]["update"]["content"]["text"]
        for line in bridge.received
        if b'"agent_message_chunk"' in line
    ]
    assert [c.strip() for c in chunks] == [str(i) for i in range(count)]
    assert code == 0


# A raw ACP v1 agent: answers initialize and session/new; a prompt makes it read
# hello.txt in the session's cwd with fs/read_text_file and say what it got.
V1_READING_AGENT = r"""
import json, sys

def send(message):
    print(json.dumps({"jsonrpc": "2.0", **message}), flush=True)

def read():
    return json.loads(sys.stdin.readline())

cwd = None
while True:
    line = sys.stdin.readline()
    if not line:
        break
    message = json.loads(line)
    method, rid = message.get("method"), message.get("id")
    if method == "initialize":
        caps = message["params"].get("clientCapabilities", {})
        print("offered fs:", json.dumps(caps.get("fs")), file=sys.stderr, flush=True)
        info = {"name": "reader", "version": "1"}
        send({"id": rid, "result": {"protocolVersion": 1, "agentInfo": info}})
    elif method == "session/new":
        cwd = message["params"]["cwd"]
        send({"id": rid, "result": {"sessionId": "s1"}})
    elif method == "session/prompt":
        params = {"sessionId": "s1", "path": cwd + "/hello.txt"}
        send({"id": 100, "method": "fs/read_text_file", "params": params})
        answer = read()
        error = answer.get("error", {}).get("code")
        text = answer["result"]["content"] if "result" in answer else f"error {error}"
        update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}
        send({"method": "session/update", "params": {"sessionId": "s1", "update": update}})
        send({"id": rid, "result": {"stopReason": "end_turn"}})
"""


async def reading_turn(tmp_path: Path, *options: str) -> tuple[str, Bridge]:
    (tmp_path / "hello.txt").write_text("file contents", encoding="utf-8")
    agent = [sys.executable, "-c", V1_READING_AGENT]
    bridge = await open_bridge(tmp_path, *options, agent=agent)
    await bridge.send(V2_HELLO)
    assert (await bridge.answer(0))["result"]["protocolVersion"] == 2
    new = await bridge.request(1, "session/new", {"cwd": str(tmp_path), "mcpServers": []})
    prompt = {"sessionId": new["result"]["sessionId"], "prompt": [{"type": "text", "text": "x"}]}
    await bridge.request(2, "session/prompt", prompt)
    await bridge.until(is_idle)
    (chunk,) = [
        json.loads(line)["params"]["update"]["content"]["text"]
        for line in bridge.received
        if b'"agent_message_chunk"' in line
    ]
    return chunk, bridge


async def test_fs_serves_a_v1_agents_file_reads_and_the_log_shows_both_sides(
    tmp_path: Path,
) -> None:
    log = tmp_path / "bridge.log"
    with anyio.fail_after(SCENARIO_TIMEOUT):
        text, bridge = await reading_turn(tmp_path, "--fs", "--log", str(log))
        code, err = await bridge.close()

    assert text == "file contents"
    assert (code, err) == (0, "")
    records = log.read_text(encoding="utf-8")
    assert 'offered fs: {"readTextFile": true, "writeTextFile": true}' in records
    for side in ("client->bridge v2", "bridge->agent v1", "agent->bridge v1", "bridge->client v2"):
        assert f" {side} " in records, side
    asked = [
        r for r in records.splitlines() if " agent->bridge v1 " in r and "fs/read_text_file" in r
    ]
    assert len(asked) == 1


async def test_without_fs_a_v1_agents_file_read_is_refused(tmp_path: Path) -> None:
    with anyio.fail_after(SCENARIO_TIMEOUT):
        text, bridge = await reading_turn(tmp_path)
        code, err = await bridge.close()

    assert text == "error -32601"
    assert code == 0
    assert "offered fs: null" in err  # the agent's stderr passes through without --log


DYING_V1_AGENT = """
import json, sys
rid = json.loads(sys.stdin.readline())["id"]
print(json.dumps({"jsonrpc": "2.0", "id": rid, "result": {"protocolVersion": 1}}), flush=True)
sys.stdin.readline()
print("v1 agent: out of memory", file=sys.stderr)
sys.exit(6)
"""


async def test_a_translated_agent_dying_fails_the_pending_request_in_one_line(
    tmp_path: Path,
) -> None:
    with anyio.fail_after(SCENARIO_TIMEOUT):
        bridge = await open_bridge(tmp_path, agent=[sys.executable, "-c", DYING_V1_AGENT])
        await bridge.send(V2_HELLO)
        await bridge.answer(0)
        new = await bridge.request(1, "session/new", {"cwd": str(tmp_path), "mcpServers": []})
        code, err = await bridge.close()

    assert new["error"]["code"] == -32603
    assert code == 6
    assert "the agent exited with status 6 before the client closed the connection" in err
    assert "v1 agent: out of memory" in err
    assert "Traceback" not in err

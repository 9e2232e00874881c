"""Extension notifications (``_``-prefixed) cross ``acp2 bridge`` in both directions,
params unchanged; other notifications without a counterpart are dropped (fault 5).

Real processes: ``acp2 bridge`` in front of a scripted agent, driven with raw JSON lines.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.abc import Process

from helpers.processes import ACP2, isolated_env
from helpers.timeouts import PROCESS_TIMEOUT

pytestmark = pytest.mark.anyio

NEWER_V2 = Path(__file__).parents[1] / "client" / "newer_v2_agent.py"
AUTH_STATUS = {"state": "authenticated", "accounts": [{"id": "me"}]}

# A raw v1 agent: a prompt makes it send an extension notification, then say which
# extension notifications it has received from its client so far.
V1_EXTENSION_AGENT = r"""
import json, sys

def send(message):
    print(json.dumps({"jsonrpc": "2.0", **message}), flush=True)

heard = []
for line in sys.stdin:
    message = json.loads(line)
    method, rid = message.get("method"), message.get("id")
    if method == "initialize":
        info = {"name": "x", "version": "1"}
        send({"id": rid, "result": {"protocolVersion": 1, "agentInfo": info}})
    elif method == "session/new":
        send({"id": rid, "result": {"sessionId": "s1"}})
    elif method and method.startswith("_") and rid is None:
        heard.append([method, message.get("params")])
    elif method == "session/prompt":
        send({"method": "_x/progress", "params": {"done": 0.5, "deep": {"k": [1, None]}}})
        text = json.dumps(heard)
        update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}
        send({"method": "session/update", "params": {"sessionId": "s1", "update": update}})
        send({"id": rid, "result": {"stopReason": "end_turn"}})
"""


class Lines:
    """A running ``acp2 bridge``: JSON lines in and out."""

    def __init__(self, process: Process) -> None:
        self.process = process
        self.received: list[dict[str, Any]] = []
        self._buffer = b""

    async def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        await self.process.stdin.send(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")

    async def request(self, rid: int, method: str, params: Any) -> dict[str, Any]:
        await self.send({"id": rid, "method": method, "params": params})
        return await self.until(lambda f: f.get("id") == rid and "method" not in f)

    async def until(self, predicate: Any) -> dict[str, Any]:
        assert self.process.stdout is not None
        with anyio.fail_after(PROCESS_TIMEOUT):
            while True:
                while b"\n" not in self._buffer:
                    self._buffer += await self.process.stdout.receive()
                line, self._buffer = self._buffer.split(b"\n", 1)
                frame: dict[str, Any] = json.loads(line)
                self.received.append(frame)
                if predicate(frame):
                    return frame


async def _bridge(tmp_path: Path, agent: list[str]) -> Lines:
    argv = [*ACP2, "bridge", "--", *agent]
    return Lines(await anyio.open_process(argv, env=isolated_env(tmp_path), cwd=tmp_path))


def _is_idle(frame: dict[str, Any]) -> bool:
    update = (frame.get("params") or {}).get("update") or {}
    return update.get("state") == "idle"


async def test_a_v2_agents_extension_notification_reaches_the_v1_client_unchanged(
    tmp_path: Path,
) -> None:
    lines = await _bridge(tmp_path, [sys.executable, str(NEWER_V2)])
    async with lines.process:
        hello = {"protocolVersion": 1, "clientInfo": {"name": "zed", "version": "1"}}
        assert (await lines.request(0, "initialize", hello))["result"]["protocolVersion"] == 1
        new = await lines.request(1, "session/new", {"cwd": str(tmp_path), "mcpServers": []})
        prompt = {
            "sessionId": new["result"]["sessionId"],
            "prompt": [{"type": "text", "text": "x"}],
        }
        answer = await lines.request(2, "session/prompt", prompt)
        assert answer["result"]["stopReason"] == "end_turn"
        notes = [f for f in lines.received if f.get("method") == "_auth/status_update"]
        assert notes == [{"jsonrpc": "2.0", "method": "_auth/status_update", "params": AUTH_STATUS}]
        lines.process.terminate()


async def test_extension_notifications_cross_a_bridged_v1_agent_both_ways(tmp_path: Path) -> None:
    lines = await _bridge(tmp_path, [sys.executable, "-c", V1_EXTENSION_AGENT])
    async with lines.process:
        hello = {"protocolVersion": 2, "info": {"name": "c", "version": "1"}, "capabilities": {}}
        await lines.request(0, "initialize", hello)
        new = await lines.request(1, "session/new", {"cwd": str(tmp_path), "mcpServers": []})
        sid = new["result"]["sessionId"]
        await lines.send({"method": "_client/hello", "params": {"n": 1}})
        await lines.send({"method": "not_an_extension/hello", "params": {"n": 2}})
        text = [{"type": "text", "text": "go"}]  # an empty prompt is refused (PL-02)
        await lines.request(2, "session/prompt", {"sessionId": sid, "prompt": text})
        await lines.until(_is_idle)
        progress = [f for f in lines.received if f.get("method") == "_x/progress"]
        assert progress == [
            {
                "jsonrpc": "2.0",
                "method": "_x/progress",
                "params": {"done": 0.5, "deep": {"k": [1, None]}},
            }
        ]
        (said,) = [
            f["params"]["update"]["content"]["text"]
            for f in lines.received
            if (f.get("params") or {}).get("update", {}).get("sessionUpdate")
            == "agent_message_chunk"
        ]
        assert json.loads(said) == [["_client/hello", {"n": 1}]]
        lines.process.terminate()


async def test_with_debug_and_a_log_the_bridge_log_names_what_it_decoded_away(
    tmp_path: Path,
) -> None:
    log = tmp_path / "bridge.log"
    argv = [*ACP2, "--debug", "bridge", "--log", str(log), "--", sys.executable, str(NEWER_V2)]
    lines = Lines(await anyio.open_process(argv, env=isolated_env(tmp_path), cwd=tmp_path))
    async with lines.process:
        hello = {"protocolVersion": 1, "clientInfo": {"name": "zed", "version": "1"}}
        await lines.request(0, "initialize", hello)
        new = await lines.request(1, "session/new", {"cwd": str(tmp_path), "mcpServers": []})
        prompt = {"sessionId": new["result"]["sessionId"], "prompt": []}
        await lines.request(2, "session/prompt", prompt)
        assert lines.process.stdin is not None
        await lines.process.stdin.aclose()
        with anyio.fail_after(PROCESS_TIMEOUT):
            await lines.process.wait()
    notes = [line for line in log.read_text().splitlines() if "ignored fields" in line]
    assert any("update.usage.reasoningTokensX" in line for line in notes), notes
    assert any("'titleX'" in line for line in notes), notes

"""``acp2 run --mcp`` gives Claude Code (``@agentclientprotocol/claude-agent-acp``, ACP v2,
installed from ``npm-v2/package-lock.json``) an MCP server, and Claude Code calls it: the
fake Messages API on 127.0.0.1 (:mod:`fake_vendors`) asks for the server's ``echo`` tool
when the prompt holds :data:`~fake_vendors.MCP_MARK`, the adapter asks acp2 for
permission (Claude runs in its manual permission mode), runs the tool on the server it
started from the ``mcpServers`` of ``session/new``, and sends the tool's answer back to
the model.

The server is the SDK-built test server of ``tests/mcp_servers`` over stdio, started by
Claude Code itself (not by acp2): what is tested is that the ``stdio`` server acp2's
client sends reaches a real v2 agent in a form it can start. Claude Code offers MCP tools
behind its ``ToolSearch`` tool by default (the model must search before it sees them);
``ENABLE_TOOL_SEARCH=false`` offers them with the first request, as the fake needs.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from . import fake_vendors
from .agents import claude, run
from .fake_vendors import MCP_MARK, REPLY

pytestmark = pytest.mark.real_agents

SERVER = Path(__file__).resolve().parents[1] / "mcp_servers" / "py_mcp_server.py"


def _tool_results(requests: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    """Every ``tool_result`` block the adapter sent the model."""
    return [
        block
        for _, body in requests
        for message in body.get("messages") or []
        if isinstance(message.get("content"), list)
        for block in message["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ]


def test_claude_agent_acp_calls_the_mcp_server_acp2_run_gives_it(
    v2_adapters: Path, tmp_path: Path
) -> None:
    with fake_vendors.serve_anthropic() as fake:
        agent = claude(v2_adapters, fake.url, tmp_path)
        agent.env["ENABLE_TOOL_SEARCH"] = "false"
        mcp = f"py={sys.executable} {SERVER}"
        done = run(agent, f"Call the echo tool with {MCP_MARK}.", tmp_path, "--mcp", mcp)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.summary["stopReason"] == "end_turn"
    assert REPLY in done.summary["text"]
    opened = [f.message for f in done.wire if f.sender == "client" and f.method == "session/new"]
    assert [s["name"] for s in opened[0]["params"]["mcpServers"]] == ["py"]
    asked = [request["title"] for request, _ in done.permissions()]
    assert asked == ["mcp__py__echo"]
    finished = [u for u in done.updates("tool_call_update") if u.get("status") == "completed"]
    assert len(finished) == 1
    assert f"echo: {MCP_MARK}" in str(finished[0]["content"])
    results = _tool_results(fake.requests)
    assert results, "no tool result reached the model"
    assert f"echo: {MCP_MARK}" in str(results[-1]["content"])

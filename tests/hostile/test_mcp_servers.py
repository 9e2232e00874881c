"""Hostile MCP servers: a server that fails to start, dies mid-call, hangs, floods or
answers garbage costs that server only. The session goes on, the model reads that the
tool failed, the user sees one clear line, and no process is left behind."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
import pytest

from acp2.coder.mcptools.results import MODEL_TEXT_LIMIT
from acp2.schema import AgentMessageChunk, McpServerStdio, TextContent
from helpers.timeouts import SCENARIO_TIMEOUT
from mcp_servers.mcp_helpers import ToolModel, coder, mcp_session, stdio_server

pytestmark = pytest.mark.anyio

GARBAGE = Path(__file__).resolve().parent / "garbage_mcp_server.py"
GREEDY = Path(__file__).resolve().parent / "greedy_mcp_server.py"
ENDLESS = Path(__file__).resolve().parent / "endless_mcp_server.py"


def _said(updates: list[object]) -> str:
    return "".join(
        u.content.text
        for u in updates
        if isinstance(u, AgentMessageChunk) and isinstance(u.content, TextContent)
    )


async def test_a_server_that_answers_garbage_is_reported_once_and_the_others_still_work(
    tmp_path: Path,
) -> None:
    junk = McpServerStdio(name="junk", command=sys.executable, args=[str(GARBAGE)])
    model = ToolModel([("mcp__py__echo", {"text": "a"})], [], [("mcp__py__echo", {"text": "b"})])
    agent = coder(model, connect_timeout=2.0)
    with anyio.fail_after(SCENARIO_TIMEOUT):
        async with mcp_session(agent, tmp_path, [junk, stdio_server()]) as session:
            first = await session.prompt("one")
            assert await first.wait() == "end_turn"
            second = await session.prompt("two")
            assert await second.wait() == "end_turn"
    said = _said(first.updates) + _said(second.updates)
    assert said.count("MCP server 'junk' is unavailable") == 1
    assert "\x1b" not in said
    assert model.tool_results(1) == ["echo: a"]
    assert model.tool_results(-1)[-1] == "echo: b"
    assert not any(name.startswith("mcp__junk") for name in model.offered())


async def test_a_server_that_cannot_start_costs_only_itself(tmp_path: Path) -> None:
    missing = McpServerStdio(name="gone", command="/nonexistent/mcp-server")
    model = ToolModel([("mcp__py__echo", {"text": "x"})])
    with anyio.fail_after(SCENARIO_TIMEOUT):
        async with mcp_session(coder(model), tmp_path, [missing, stdio_server()]) as session:
            work = await session.prompt("go")
            assert await work.wait() == "end_turn"
    assert "MCP server 'gone' is unavailable: could not be started" in _said(work.updates)
    assert model.tool_results() == ["echo: x"]


async def test_a_server_that_never_answers_initialize_is_given_up_after_the_connect_timeout(
    tmp_path: Path,
) -> None:
    silent = McpServerStdio(name="silent", command="/bin/sleep", args=["600"])
    model = ToolModel()
    with anyio.fail_after(SCENARIO_TIMEOUT):
        agent = coder(model, connect_timeout=1.0)
        async with mcp_session(agent, tmp_path, [silent]) as session:
            work = await session.prompt("go")
            assert await work.wait() == "end_turn"
    assert "MCP server 'silent' is unavailable: no answer within 1s" in _said(work.updates)


async def test_a_server_that_dies_mid_call_fails_that_call_and_the_session_goes_on(
    tmp_path: Path,
) -> None:
    model = ToolModel([("mcp__py__crash", {})], [("mcp__py__echo", {"text": "again"})])
    with anyio.fail_after(SCENARIO_TIMEOUT):
        async with mcp_session(coder(model), tmp_path, [stdio_server()]) as session:
            work = await session.prompt("go")
            assert await work.wait() == "end_turn"
            crash, echo = session.state.tool_calls.values()
            later = await session.prompt("still there?")
            assert await later.wait() == "end_turn"
    assert crash.status == "failed"
    assert echo.status == "failed"
    told = model.tool_results()
    assert told[0].startswith("Error: MCP server 'py' failed")
    assert "unavailable" in told[1]


async def test_a_tool_that_hangs_is_cancelled_after_the_call_timeout(tmp_path: Path) -> None:
    model = ToolModel([("mcp__py__wait", {})], [("mcp__py__echo", {"text": "after"})])
    with anyio.fail_after(SCENARIO_TIMEOUT):
        async with mcp_session(coder(model, call_timeout=1.0), tmp_path, [stdio_server()]) as s:
            work = await s.prompt("go")
            assert await work.wait() == "end_turn"
            wait, echo = s.state.tool_calls.values()
    assert wait.status == "failed"
    assert "timed out" in model.tool_results()[0]
    assert echo.status == "completed"  # the server itself is fine


async def test_a_flood_of_output_reaches_the_model_cut_and_the_session_goes_on(
    tmp_path: Path,
) -> None:
    model = ToolModel([("mcp__py__flood", {})], [("mcp__py__echo", {"text": "after"})])
    with anyio.fail_after(SCENARIO_TIMEOUT):
        async with mcp_session(coder(model), tmp_path, [stdio_server()]) as session:
            work = await session.prompt("go")
            assert await work.wait() == "end_turn"
            flood = next(iter(session.state.tool_calls.values()))
    told = model.tool_results()
    assert len(told[0]) <= MODEL_TEXT_LIMIT + 100
    assert told[0].endswith("[output truncated]")
    assert told[1] == "echo: after"
    assert len(flood.content[0].content.text) <= MODEL_TEXT_LIMIT


async def test_a_server_cannot_fill_the_models_context_with_tools_or_descriptions(
    tmp_path: Path,
) -> None:
    greedy = McpServerStdio(name="greedy", command=sys.executable, args=[str(GREEDY)])
    model = ToolModel()
    with anyio.fail_after(SCENARIO_TIMEOUT):
        async with mcp_session(coder(model), tmp_path, [greedy]) as session:
            work = await session.prompt("go")
            assert await work.wait() == "end_turn"
    offered = [t for t in model.requests[0].tools if t.name.startswith("mcp__greedy__")]
    assert len(offered) == 200  # McpOptions.max_tools
    assert max(len(t.description) for t in offered) < 2100
    assert max(len(json.dumps(t.parameters)) for t in offered) < 40_000


async def test_an_endless_line_stops_that_server_instead_of_filling_the_agents_memory(
    tmp_path: Path,
) -> None:
    endless = McpServerStdio(name="endless", command=sys.executable, args=[str(ENDLESS)])
    model = ToolModel([("mcp__py__echo", {"text": "x"})])
    agent = coder(model, max_line=1 << 20)
    with anyio.fail_after(SCENARIO_TIMEOUT):
        async with mcp_session(agent, tmp_path, [endless, stdio_server()]) as session:
            work = await session.prompt("go")
            assert await work.wait() == "end_turn"
    said = _said(work.updates)
    assert "MCP server 'endless' is unavailable" in said
    assert "wrote a line longer than 1048576 bytes" in said
    assert model.tool_results() == ["echo: x"]  # the other server, and the session, go on

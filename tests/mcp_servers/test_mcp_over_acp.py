"""MCP over ACP: a client hosts an MCP server object in its own process and the coding
agent calls its tools through the ACP connection itself (``mcp/connect``,
``mcp/message``, ``mcp/disconnect``): no process, no port. The tool calls are ordinary
ACP tool calls, asked first, cancellable."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from acp2.client import allow_all
from acp2.errors import LocalProtocolError
from acp2.schema import McpServerAcp, supports
from coder.coder_helpers import Recorder
from helpers.inprocess import served
from helpers.timeouts import SCENARIO_TIMEOUT, TIMEOUT
from mcp_servers.acp_hosted import hosted_server
from mcp_servers.mcp_helpers import ToolModel, coder

pytestmark = pytest.mark.anyio


async def test_a_hosted_servers_tool_is_offered_asked_about_and_run_through_acp(
    tmp_path: Path,
) -> None:
    server, _ = hosted_server()
    model = ToolModel([("mcp__tools__shout", {"text": "hello"})])
    policy = Recorder("allow_once")
    with anyio.fail_after(SCENARIO_TIMEOUT):
        async with served(coder(model), cwd=str(tmp_path), permissions=policy) as client:
            assert supports(client.agent_capabilities.session.mcp.acp)
            session = await client.new_session(str(tmp_path), mcp_servers=[server])
            work = await session.prompt("shout hello")
            assert await work.wait() == "end_turn"
            calls = list(session.state.tool_calls.values())
    assert "mcp__tools__shout" in model.offered()
    assert model.tool_results() == ["HELLO!"]
    assert [(c.title, c.status) for c in calls] == [("shout (MCP server tools)", "completed")]
    assert [r.params.title for r in policy.requests] == ["shout (MCP server tools)?"]


async def test_session_cancel_cancels_the_hosted_tool_through_acp(tmp_path: Path) -> None:
    server, marks = hosted_server()
    model = ToolModel([("mcp__tools__hold", {})])
    with anyio.fail_after(SCENARIO_TIMEOUT):
        async with served(coder(model), cwd=str(tmp_path), permissions=allow_all) as client:
            session = await client.new_session(str(tmp_path), mcp_servers=[server])
            work = await session.prompt("hold")
            with anyio.fail_after(TIMEOUT):
                await marks["started"].wait()
            await session.cancel()
            assert await work.wait() == "cancelled"
            with anyio.fail_after(TIMEOUT):
                await marks["cancelled"].wait()  # the server's handler was interrupted


async def test_the_server_may_ask_the_agent_and_notify_it_during_a_call(tmp_path: Path) -> None:
    server, _ = hosted_server()
    model = ToolModel([("mcp__tools__ping_back", {})])
    with anyio.fail_after(SCENARIO_TIMEOUT):
        async with served(coder(model), cwd=str(tmp_path), permissions=allow_all) as client:
            session = await client.new_session(str(tmp_path), mcp_servers=[server])
            assert await (await session.prompt("ping")).wait() == "end_turn"
    assert model.tool_results() == ["pinged"]


async def test_a_hosted_server_is_never_sent_to_an_agent_that_does_not_offer_it(
    tmp_path: Path,
) -> None:
    server, _ = hosted_server()
    agent = coder(ToolModel())
    agent.mcp_acp = False
    with anyio.fail_after(SCENARIO_TIMEOUT):
        async with served(agent, cwd=str(tmp_path), permissions=allow_all) as client:
            assert not supports(client.agent_capabilities.session.mcp.acp)
            with pytest.raises(LocalProtocolError, match=r"session\.mcp\.acp"):
                await client.new_session(str(tmp_path), mcp_servers=[server])
            warnings = client.use_mcp_servers([server])
    assert warnings == ["MCP server 'tools' not sent: the agent takes no acp MCP servers"]


async def test_the_same_server_object_keeps_one_id_and_an_unknown_id_is_refused(
    tmp_path: Path,
) -> None:
    server, _ = hosted_server()
    with anyio.fail_after(SCENARIO_TIMEOUT):
        async with served(coder(ToolModel()), cwd=str(tmp_path)) as client:
            client.use_mcp_servers([server])
            first = client.mcp_servers[0]
            client.use_mcp_servers([server])
            assert client.mcp_servers[0] is first
            assert isinstance(first, McpServerAcp)
            assert first.name == "tools"

"""MCP over ACP: a client hosts an MCP server object in its own process and the coding
agent calls its tools through the ACP connection itself (``mcp/connect``,
``mcp/message``, ``mcp/disconnect``): no process, no port. The tool calls are ordinary
ACP tool calls, asked first, cancellable."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp2.agent import Agent, Turn
from acp2.client import allow_all, connect, connect_url
from acp2.errors import InvalidParams, LocalProtocolError, MethodNotFound
from acp2.schema import McpServerAcp, supports
from agent.agent_harness import agent_harness, make_agent
from coder.coder_helpers import Recorder, text_of
from coder.fake_openai import serve, text_reply, tool_reply
from helpers.inprocess import served
from helpers.processes import ACP2, isolated_env
from helpers.serve_process import serving
from helpers.timeouts import SCENARIO_TIMEOUT, TIMEOUT
from mcp_servers.acp_hosted import hosted_server
from mcp_servers.mcp_helpers import ToolModel, coder

TESTS = Path(__file__).resolve().parents[1]

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


async def test_closing_the_session_disconnects_and_ends_the_hosted_server_session(
    tmp_path: Path,
) -> None:
    server, marks = hosted_server()
    with anyio.fail_after(SCENARIO_TIMEOUT):
        async with served(coder(ToolModel()), cwd=str(tmp_path)) as client:
            session = await client.new_session(str(tmp_path), mcp_servers=[server])
            with anyio.fail_after(TIMEOUT):
                await marks["opened"].wait()  # connected as the session opened
            assert not marks["ended"].is_set()
            await session.close()
            with anyio.fail_after(TIMEOUT):
                await marks["ended"].wait()  # mcp/disconnect ended its server session


async def test_the_hosted_server_session_ends_with_the_acp_connection(tmp_path: Path) -> None:
    server, marks = hosted_server()
    with anyio.fail_after(SCENARIO_TIMEOUT):
        async with served(coder(ToolModel()), cwd=str(tmp_path)) as client:
            await client.new_session(str(tmp_path), mcp_servers=[server])
            with anyio.fail_after(TIMEOUT):
                await marks["opened"].wait()
        with anyio.fail_after(TIMEOUT):
            await marks["ended"].wait()


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


async def test_the_same_server_object_keeps_one_configuration_on_a_connection(
    tmp_path: Path,
) -> None:
    server, _ = hosted_server()
    other, _ = hosted_server()
    with anyio.fail_after(SCENARIO_TIMEOUT):
        async with served(coder(ToolModel()), cwd=str(tmp_path)) as client:
            client.use_mcp_servers([server])
            first = client.mcp_servers[0]
            client.use_mcp_servers([server])
            assert client.mcp_servers[0] is first
            renamed = client.host_mcp_server(other, name="renamed")
            assert client.host_mcp_server(other) is renamed
    assert isinstance(first, McpServerAcp)
    assert first.name == "tools"
    assert renamed.name == "renamed"
    assert renamed.server_id != first.server_id


def _probe() -> Agent:
    """A library agent that says, for each server of its session, what ``shout`` answers
    or why the server is unavailable (``turn.mcp`` with MCP over ACP)."""
    agent = Agent("probe", mcp_acp=True, store=":memory:")

    @agent.prompt
    async def on_prompt(turn: Turn) -> str:
        for server in await turn.mcp.servers():
            if server.error is not None:
                await turn.say(f"{server.name}: unavailable ({server.error})\n")
                continue
            result = await server.call_tool("shout", {"text": turn.text})
            await turn.say(f"{server.name} ({server.transport}): {result.content[0].text}\n")
        return "end_turn"

    return agent


async def test_a_library_agent_reaches_hosted_servers_and_the_client_refuses_unknown_ids(
    tmp_path: Path,
) -> None:
    server, _ = hosted_server()
    ghost = McpServerAcp(name="ghost", server_id="never-offered")
    with anyio.fail_after(SCENARIO_TIMEOUT):
        async with served(_probe(), cwd=str(tmp_path)) as client:
            session = await client.new_session(str(tmp_path), mcp_servers=[server, ghost])
            work = await session.prompt("hi")
            assert await work.wait() == "end_turn"
    said = text_of(work.updates).splitlines()
    assert said[0] == "tools (acp): HI!"
    assert said[1].startswith("ghost: unavailable (could not be started (")
    assert "no MCP server 'never-offered' is offered" in said[1]


async def _shout_through(client: Any, cwd: Path, policy: Recorder) -> list[Any]:
    """Open a session giving ``client``'s agent a hosted server; run one prompt (the fake
    model calls ``shout``); return the session's tool calls."""
    server, _ = hosted_server()
    assert supports(client.agent_capabilities.session.mcp.acp)
    session = await client.new_session(str(cwd), mcp_servers=[server])
    work = await session.prompt("shout hello")
    assert await work.wait() == "end_turn"
    return list(session.state.tool_calls.values())


def _script(fake: Any) -> None:
    fake.add(
        tool_reply([("call_1", "mcp__tools__shout", {"text": "hello"})]),
        text_reply("done"),
    )


async def test_acp2_agent_over_stdio_calls_a_tool_its_client_hosts(tmp_path: Path) -> None:
    policy = Recorder("allow_once")
    with serve() as fake, anyio.fail_after(SCENARIO_TIMEOUT):
        _script(fake)
        command = [*ACP2, "agent", "--base-url", fake.url, "--api-key", "sk-x"]
        env = isolated_env(tmp_path)
        async with connect(command, cwd=tmp_path, env=env, permissions=policy) as client:
            calls = await _shout_through(client, tmp_path, policy)
    assert [(c.title, c.status) for c in calls] == [("shout (MCP server tools)", "completed")]
    assert [r.params.title for r in policy.requests] == ["shout (MCP server tools)?"]
    tool_messages = [m for m in fake.requests[1]["messages"] if m["role"] == "tool"]
    assert [m["content"] for m in tool_messages] == ["HELLO!"]


@pytest.mark.parametrize("transport", ["http", "websocket"])
async def test_acp2_serve_carries_mcp_over_acp_to_its_coding_agent(
    tmp_path: Path, transport: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    policy = Recorder("allow_once")
    path = os.pathsep.join([str(TESTS.parent / "src"), str(TESTS)])
    with serve() as fake:
        _script(fake)
        monkeypatch.setenv("MCP_TEST_MODEL_URL", fake.url)
        monkeypatch.setenv("PYTHONPATH", path)
        with serving(tmp_path, "--app", "mcp_servers.served_coder:agent") as port:
            url = f"http://127.0.0.1:{port}/acp"
            with anyio.fail_after(SCENARIO_TIMEOUT):
                async with connect_url(
                    url, transport=transport, cwd=tmp_path, permissions=policy
                ) as client:
                    calls = await _shout_through(client, tmp_path, policy)
    assert [(c.title, c.status) for c in calls] == [("shout (MCP server tools)", "completed")]
    assert [r.params.title for r in policy.requests] == ["shout (MCP server tools)?"]


async def test_an_agent_without_mcp_over_acp_refuses_its_servers_and_messages() -> None:
    async with agent_harness(make_agent(), initialize=True, validate="agent") as h:
        server = {"type": "acp", "name": "t", "serverId": "x"}
        with pytest.raises(InvalidParams):
            await h.new_session(mcpServers=[server])
        with pytest.raises(MethodNotFound):
            await h.call("mcp/message", {"connectionId": "c", "method": "tools/list"})


async def test_an_agent_with_mcp_over_acp_refuses_messages_for_unknown_connections() -> None:
    async with agent_harness(make_agent(mcp_acp=True), validate="agent") as h:
        result = await h.initialize()
        assert result["capabilities"]["session"]["mcp"] == {"acp": {}}
        with pytest.raises(InvalidParams, match="no MCP connection"):
            await h.call("mcp/message", {"connectionId": "c", "method": "tools/list"})
        await h.notify("mcp/message", {"connectionId": "c", "method": "notifications/x"})
        await h.new_session()  # a stray notification is dropped: the link goes on


async def test_acp2_serve_passes_mcp_over_acp_through_to_an_agent_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    policy = Recorder("allow_once")
    with serve() as fake:
        _script(fake)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        agent = [*ACP2, "agent", "--base-url", fake.url]
        with serving(tmp_path, "--", *agent) as port:
            url = f"http://127.0.0.1:{port}/acp"
            with anyio.fail_after(SCENARIO_TIMEOUT):
                async with connect_url(url, cwd=tmp_path, permissions=policy) as client:
                    calls = await _shout_through(client, tmp_path, policy)
    assert [(c.title, c.status) for c in calls] == [("shout (MCP server tools)", "completed")]

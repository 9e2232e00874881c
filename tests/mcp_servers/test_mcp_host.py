"""The client's side of MCP over ACP (``acp2.client.mcp_host``) against a scripted agent
that writes the ``mcp/*`` frames itself: the wire shapes of the RFD, and an untrusted
agent held to the servers the client offered and to a bounded number of connections."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp_types import LATEST_PROTOCOL_VERSION

from acp2.client.mcp_host import MAX_CONNECTIONS
from client.client_helpers import FakeAgent, fake_agent, initialize_result
from helpers.timeouts import TIMEOUT
from mcp_servers.acp_hosted import hosted_server

pytestmark = pytest.mark.anyio


async def _agent(fake: FakeAgent, msg: dict[str, Any]) -> None:
    """Answer initialize advertising ``session.mcp.acp``, and session/new."""
    if msg.get("method") == "initialize":
        await fake.respond(msg, initialize_result(mcp={"acp": {}}))
    elif msg.get("method") == "session/new":
        await fake.respond(msg, {"sessionId": "s1"})


async def _ask(fake: FakeAgent, method: str, params: Any) -> dict[str, Any]:
    """Send the client a request; return its answer frame."""
    rid = await fake.request(method, params)
    answers = await fake.wait_for(lambda: fake.answers_to(rid))
    return answers[0]


async def _session_with_server(client: Any, fake: FakeAgent) -> str:
    """Open a session giving the hosted server; return the serverId the agent was sent."""
    server, _ = hosted_server()
    await client.new_session(mcp_servers=[server])
    opened = next(m for m in fake.received if m.get("method") == "session/new")
    (config,) = opened["params"]["mcpServers"]
    assert config.keys() == {"type", "name", "serverId"}
    assert (config["type"], config["name"]) == ("acp", "tools")
    return str(config["serverId"])


async def test_an_mcp_session_runs_over_mcp_message_frames_as_the_rfd_shapes_them() -> None:
    with anyio.fail_after(TIMEOUT):
        async with fake_agent(_agent) as (client, fake):
            server_id = await _session_with_server(client, fake)
            connected = await _ask(fake, "mcp/connect", {"serverId": server_id})
            connection = connected["result"]["connectionId"]
            hello = {
                "protocolVersion": LATEST_PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "fake", "version": "1"},
            }
            msg = {"connectionId": connection, "method": "initialize", "params": hello}
            initialized = await _ask(fake, "mcp/message", msg)
            assert initialized["result"]["serverInfo"]["name"] == "tools"
            note = {"connectionId": connection, "method": "notifications/initialized"}
            await fake.send({"jsonrpc": "2.0", "method": "mcp/message", "params": note})
            call = {"name": "shout", "arguments": {"text": "hi"}}
            msg = {"connectionId": connection, "method": "tools/call", "params": call}
            called = await _ask(fake, "mcp/message", msg)
            assert called["result"]["content"][0]["text"] == "HI!"
            unknown = {"connectionId": connection, "method": "no/such_method"}
            failed = await _ask(fake, "mcp/message", unknown)
            assert failed["error"]["code"] == -32601  # the MCP error, as the outer error
            closed = await _ask(fake, "mcp/disconnect", {"connectionId": connection})
            assert closed["result"] == {}
            gone = await _ask(fake, "mcp/message", msg)
            assert gone["error"]["code"] == -32602


async def test_an_agent_reaches_only_the_servers_the_client_offered() -> None:
    with anyio.fail_after(TIMEOUT):
        async with fake_agent(_agent) as (client, fake):
            await client.new_session()
            refused = await _ask(fake, "mcp/connect", {"serverId": "guessed"})
            stray = {"connectionId": "guessed", "method": "tools/list"}
            unknown = await _ask(fake, "mcp/message", stray)
            not_open = await _ask(fake, "mcp/disconnect", {"connectionId": "guessed"})
    assert refused["error"]["code"] == -32602
    assert unknown["error"]["code"] == -32602
    assert not_open["error"]["code"] == -32602


async def test_an_agent_holds_a_bounded_number_of_connections() -> None:
    with anyio.fail_after(TIMEOUT):
        async with fake_agent(_agent) as (client, fake):
            server_id = await _session_with_server(client, fake)
            opened = [
                await _ask(fake, "mcp/connect", {"serverId": server_id})
                for _ in range(MAX_CONNECTIONS)
            ]
            over = await _ask(fake, "mcp/connect", {"serverId": server_id})
            first = opened[0]["result"]["connectionId"]
            await _ask(fake, "mcp/disconnect", {"connectionId": first})
            again = await _ask(fake, "mcp/connect", {"serverId": server_id})
    ids = {answer["result"]["connectionId"] for answer in opened}
    assert len(ids) == MAX_CONNECTIONS  # each connection its own id
    assert over["error"]["code"] == -32600
    assert "connectionId" in again["result"]

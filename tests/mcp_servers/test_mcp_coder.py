"""The coding agent connects the MCP servers a client gives it and calls their tools as
ACP tool calls: reported, permission-gated per server and tool, cancellable."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp2.client import allow_all, connect
from acp2.coder.tools.confine import CommandPolicy, choose
from acp2.errors import LocalProtocolError
from acp2.schema import (
    Content,
    EnvVariable,
    HttpHeader,
    ImageContent,
    McpServerSse,
    McpServerStdio,
    TextContent,
    supports,
)
from coder.coder_helpers import Recorder, group_alive, group_members, wait_gone
from helpers.inprocess import served
from helpers.processes import ACP2, isolated_env
from helpers.timeouts import SCENARIO_TIMEOUT
from mcp_servers.mcp_helpers import (
    SERVER,
    Marks,
    ToolModel,
    coder,
    http_server,
    mcp_session,
    sse_server,
    stdio_server,
)

pytestmark = pytest.mark.anyio


async def test_a_stdio_server_tool_is_offered_under_a_prefix_asked_about_and_run(
    tmp_path: Path,
) -> None:
    model = ToolModel([("mcp__py__echo", {"text": "hello"})])
    policy = Recorder("allow_once")
    with anyio.fail_after(SCENARIO_TIMEOUT):
        async with mcp_session(coder(model), tmp_path, [stdio_server()], policy) as session:
            work = await session.prompt("echo hello")
            assert await work.wait() == "end_turn"
            calls = list(session.state.tool_calls.values())
    assert "mcp__py__echo" in model.offered()
    assert "read_file" in model.offered()
    assert model.tool_results() == ["echo: hello"]
    assert [(c.title, c.status) for c in calls] == [("echo (MCP server py)", "completed")]
    assert calls[0].raw_input == {"text": "hello"}
    assert len(policy.requests) == 1
    assert policy.requests[0].params.title == "echo (MCP server py)?"


async def test_a_streamable_http_server_built_with_the_sdk_is_called_the_same_way(
    tmp_path: Path,
) -> None:
    model = ToolModel([("mcp__web__total", {"a": 2, "b": 3})])
    with http_server() as server, anyio.fail_after(SCENARIO_TIMEOUT):
        async with mcp_session(coder(model), tmp_path, [server]) as session:
            work = await session.prompt("add")
            assert await work.wait() == "end_turn"
            call = next(iter(session.state.tool_calls.values()))
    assert call.status == "completed"
    assert '"sum": 5' in model.tool_results()[0]


async def test_images_and_tool_errors_become_tool_call_content_and_failures(
    tmp_path: Path,
) -> None:
    model = ToolModel([("mcp__py__picture", {}), ("mcp__py__broken", {})])
    with anyio.fail_after(SCENARIO_TIMEOUT):
        async with mcp_session(coder(model), tmp_path, [stdio_server()]) as session:
            work = await session.prompt("go")
            assert await work.wait() == "end_turn"
            picture, broken = session.state.tool_calls.values()
    assert picture.status == "completed"
    assert isinstance(picture.content[0], Content)
    assert isinstance(picture.content[0].content, ImageContent)
    assert broken.status == "failed"
    shown = broken.content[0].content
    assert isinstance(shown, TextContent)
    assert "always fails" in shown.text
    told = model.tool_results()
    assert told[0] == "[image image/png]"
    assert told[1].startswith("Error:")
    assert "always fails" in told[1]


async def test_a_denied_call_never_reaches_the_server(tmp_path: Path) -> None:
    marks = Marks(tmp_path)
    model = ToolModel([("mcp__py__wait", {})])
    servers = [stdio_server(marks=marks)]
    with anyio.fail_after(SCENARIO_TIMEOUT):
        async with mcp_session(coder(model), tmp_path, servers, Recorder("reject_once")) as s:
            work = await s.prompt("go")
            assert await work.wait() == "end_turn"
            call = next(iter(s.state.tool_calls.values()))
    assert call.status == "failed"
    assert model.tool_results() == ["Error: the user rejected this action."]
    assert marks.pending() == b""
    marks.close()


async def test_allow_always_covers_that_tool_of_that_server_only(tmp_path: Path) -> None:
    model = ToolModel(
        [("mcp__py__echo", {"text": "1"})],
        [("mcp__py__echo", {"text": "2"}), ("mcp__py__total", {"a": 1, "b": 1})],
    )
    policy = Recorder("allow_always", "allow_once")
    with anyio.fail_after(SCENARIO_TIMEOUT):
        async with mcp_session(coder(model), tmp_path, [stdio_server()], policy) as session:
            work = await session.prompt("go")
            assert await work.wait() == "end_turn"
    asked = [r.params.title for r in policy.requests]
    assert asked == ["echo (MCP server py)?", "total (MCP server py)?"]


async def test_cancelling_mid_call_cancels_the_mcp_request_and_the_turn_ends_cancelled(
    tmp_path: Path,
) -> None:
    marks = Marks(tmp_path)
    model = ToolModel([("mcp__py__wait", {})])
    servers = [stdio_server(marks=marks)]
    with anyio.fail_after(SCENARIO_TIMEOUT):
        async with mcp_session(coder(model), tmp_path, servers, allow_all) as session:
            work = await session.prompt("go")
            assert await marks.next() == "started"
            await session.cancel()
            assert await work.wait() == "cancelled"
            call = next(iter(session.state.tool_calls.values()))
            # The server is still running: only MCP's notifications/cancelled stops the tool.
            assert await marks.next() == "cancelled"
    marks.close()
    assert call.status == "cancelled"
    assert len(model.requests) == 1


async def test_stdio_servers_end_with_the_session_that_started_them(tmp_path: Path) -> None:
    model = ToolModel([("mcp__py__group", {})])
    with anyio.fail_after(SCENARIO_TIMEOUT):
        async with mcp_session(coder(model), tmp_path, [stdio_server()]) as session:
            work = await session.prompt("group")
            assert await work.wait() == "end_turn"
            pgid = int(model.tool_results()[0])
            members = group_members(pgid)
            assert len(members) == 2  # the server and the relay bounding its lines
            await session.close()
            await wait_gone(members)
    assert not group_alive(pgid)


async def test_stdio_servers_end_when_the_client_goes_away(tmp_path: Path) -> None:
    model = ToolModel([("mcp__py__group", {})])
    with anyio.fail_after(SCENARIO_TIMEOUT):
        async with mcp_session(coder(model), tmp_path, [stdio_server()]) as session:
            work = await session.prompt("group")
            assert await work.wait() == "end_turn"
            members = group_members(int(model.tool_results()[0]))
        await wait_gone(members)


@pytest.mark.parametrize("kind", ["bubblewrap", "landlock"])
async def test_a_stdio_server_runs_in_the_command_sandbox_unless_the_user_opts_out(
    tmp_path: Path, kind: str
) -> None:
    if not choose(CommandPolicy(sandbox=kind)).sandboxed:
        pytest.skip(f"this machine has no {kind}")
    project, outside = tmp_path / "project", tmp_path / "outside"
    project.mkdir()
    outside.mkdir()
    inside_file, outside_file = project / "in.txt", outside / "out.txt"
    for sandbox in (kind, False):
        model = ToolModel(
            [("mcp__py__touch", {"path": str(inside_file)})],
            [("mcp__py__touch", {"path": str(outside_file)})],
        )
        with anyio.fail_after(SCENARIO_TIMEOUT):
            agent = coder(model, sandbox=sandbox)
            async with mcp_session(agent, project, [stdio_server()]) as session:
                work = await session.prompt("touch")
                assert await work.wait() == "end_turn"
        assert inside_file.exists()
        assert outside_file.exists() is not bool(sandbox)
        inside_file.unlink()


async def test_acp2_agent_starts_a_clients_server_in_its_sandbox_and_stops_it_on_exit(
    tmp_path: Path,
) -> None:
    alive = tmp_path / "alive.fifo"
    os.mkfifo(alive)
    reader = os.open(alive, os.O_RDONLY | os.O_NONBLOCK)
    env = [EnvVariable(name="MCP_TEST_ALIVE", value=str(alive))]
    server = McpServerStdio(name="py", command=sys.executable, args=[str(SERVER)], env=env)
    command = [*ACP2, "agent", "--store", str(tmp_path / "history.db")]
    try:
        with anyio.fail_after(SCENARIO_TIMEOUT):
            async with connect(command, cwd=tmp_path, env=isolated_env(tmp_path)) as client:
                mcp = client.agent_capabilities.session.mcp
                assert supports(mcp.stdio)
                assert supports(mcp.http)
                await client.new_session(str(tmp_path), mcp_servers=[server])
                assert await _read_fifo(reader) == b"up\n"  # started with the session
            assert await _read_fifo(reader) == b""  # and gone with the agent
    finally:
        os.close(reader)


async def _read_fifo(fd: int) -> bytes:
    while True:
        await anyio.wait_readable(fd)
        try:
            return os.read(fd, 64)
        except BlockingIOError:
            continue


async def test_a_v1_clients_mcp_servers_reach_acp2_agent_through_the_projection(
    tmp_path: Path,
) -> None:
    alive = tmp_path / "alive.fifo"
    os.mkfifo(alive)
    reader = os.open(alive, os.O_RDONLY | os.O_NONBLOCK)
    # v1's stdio server: no "type", args and env required.
    server = {
        "name": "py",
        "command": sys.executable,
        "args": [str(SERVER)],
        "env": [{"name": "MCP_TEST_ALIVE", "value": str(alive)}],
    }
    frames = [
        {"id": 0, "method": "initialize", "params": {"protocolVersion": 1}},
        {
            "id": 1,
            "method": "session/new",
            "params": {"cwd": str(tmp_path), "mcpServers": [server]},
        },
    ]
    command = [*ACP2, "agent", "--store", str(tmp_path / "history.db")]
    try:
        with anyio.fail_after(SCENARIO_TIMEOUT):
            async with await anyio.open_process(command, env=isolated_env(tmp_path)) as agent:
                assert agent.stdin is not None
                assert agent.stdout is not None
                for frame in frames:
                    await agent.stdin.send(json.dumps({"jsonrpc": "2.0", **frame}).encode() + b"\n")
                answers = await _answers(agent.stdout, 2)
                assert answers[0]["result"]["protocolVersion"] == 1
                assert "sessionId" in answers[1]["result"]
                assert await _read_fifo(reader) == b"up\n"
                await agent.stdin.aclose()
                assert await _read_fifo(reader) == b""
    finally:
        os.close(reader)


async def _answers(stdout: Any, count: int) -> dict[int, Any]:
    """Read frames until the answers to requests 0..count-1 arrived; return them by id."""
    found: dict[int, Any] = {}
    buffer = b""
    while len(found) < count:
        buffer += await stdout.receive()
        *lines, buffer = buffer.split(b"\n")
        for line in lines:
            frame = json.loads(line)
            if "id" in frame and "method" not in frame:
                found[frame["id"]] = frame
    return found


async def test_a_resume_with_the_same_servers_keeps_them_and_new_ones_replace_them(
    tmp_path: Path,
) -> None:
    group = [("mcp__py__group", {})]
    model = ToolModel(group, [], group, [])  # one call in each of the first two turns
    with anyio.fail_after(SCENARIO_TIMEOUT):
        async with served(coder(model), cwd=str(tmp_path), permissions=allow_all) as client:
            session = await client.new_session(str(tmp_path), mcp_servers=[stdio_server()])
            assert await (await session.prompt("one")).wait() == "end_turn"
            again = await client.resume(session.id, mcp_servers=[stdio_server()])
            assert await (await again.prompt("two")).wait() == "end_turn"
            first, second = (int(text) for text in model.tool_results())
            assert first == second  # the same server process group: not restarted
            members = group_members(first)
            other = await client.resume(session.id, mcp_servers=[stdio_server("other")])
            await wait_gone(members)  # replaced: the old server is stopped
            assert await (await other.prompt("three")).wait() == "end_turn"
    assert "mcp__other__echo" in model.offered(-1)
    assert "mcp__py__echo" not in model.offered(-1)


async def test_an_sse_server_is_advertised_and_called_with_its_headers(tmp_path: Path) -> None:
    model = ToolModel(
        [("mcp__events__echo", {"text": "over sse"}), ("mcp__events__header", {"name": "X-Test"})]
    )
    headers = [HttpHeader(name="X-Test", value="yes")]
    with sse_server(headers=headers) as server, anyio.fail_after(SCENARIO_TIMEOUT):
        async with served(coder(model), cwd=str(tmp_path), permissions=allow_all) as client:
            assert supports(client.agent_capabilities.session.mcp.sse)
            session = await client.new_session(str(tmp_path), mcp_servers=[server])
            work = await session.prompt("echo")
            assert await work.wait() == "end_turn"
            call = next(iter(session.state.tool_calls.values()))
    assert (call.title, call.status) == ("echo (MCP server events)", "completed")
    assert model.tool_results() == ["echo: over sse", "yes"]


async def test_an_sse_server_is_never_sent_to_an_agent_that_does_not_advertise_sse(
    tmp_path: Path,
) -> None:
    agent = coder(ToolModel())
    agent.mcp_sse = False
    server = McpServerSse(name="events", url="http://127.0.0.1:9/sse")
    with anyio.fail_after(SCENARIO_TIMEOUT):
        async with served(agent, cwd=str(tmp_path)) as client:
            assert not supports(client.agent_capabilities.session.mcp.sse)
            with pytest.raises(LocalProtocolError, match=r"session\.mcp\.sse"):
                await client.new_session(str(tmp_path), mcp_servers=[server])
            warnings = client.use_mcp_servers([server])
    assert warnings == ["MCP server 'events' not sent: the agent takes no sse MCP servers"]

"""The coding agent with the reference MCP servers from npm (installed from the lockfile in
``npm/``, see ``npm_env``), each run over stdio in the command sandbox: a tool call on
each in a turn with a permission request, and a cancel in the middle of a long call."""

from __future__ import annotations

import shutil
from pathlib import Path

import anyio
import pytest

from acp2.client import allow_all
from acp2.schema import McpServerStdio
from coder.coder_helpers import Recorder
from helpers.timeouts import SCENARIO_TIMEOUT
from mcp_servers import npm_env
from mcp_servers.mcp_helpers import ToolModel, coder, mcp_session

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def npm_servers() -> Path:
    """The ``node_modules/@modelcontextprotocol`` folder of the installed servers."""
    try:
        folder = npm_env.ensure_installed()
    except npm_env.NodeUnavailable as exc:
        pytest.skip(f"the npm MCP servers are unavailable: {exc}")
    return folder / "node_modules" / "@modelcontextprotocol"


def _server(name: str, package: Path, *args: str) -> McpServerStdio:
    node = shutil.which("node")
    assert node is not None  # npm_env checked it
    return McpServerStdio(name=name, command=node, args=[str(package / "dist/index.js"), *args])


async def test_the_everything_server_echoes_and_adds_after_permission_requests(
    npm_servers: Path, tmp_path: Path
) -> None:
    everything = _server("everything", npm_servers / "server-everything")
    model = ToolModel(
        [
            ("mcp__everything__echo", {"message": "hi"}),
            ("mcp__everything__get-sum", {"a": 2, "b": 5}),
        ]
    )
    policy = Recorder("allow_once")
    with anyio.fail_after(SCENARIO_TIMEOUT):
        agent = coder(model, sandbox=True)
        async with mcp_session(agent, tmp_path, [everything], policy) as session:
            work = await session.prompt("go")
            assert await work.wait() == "end_turn"
            calls = list(session.state.tool_calls.values())
    assert [c.status for c in calls] == ["completed", "completed"]
    assert [r.params.title for r in policy.requests] == [
        "echo (MCP server everything)?",
        "get-sum (MCP server everything)?",
    ]
    echo, total = model.tool_results()
    assert "hi" in echo
    assert "7" in total


async def test_the_filesystem_server_reads_a_project_file_from_inside_the_sandbox(
    npm_servers: Path, tmp_path: Path
) -> None:
    (tmp_path / "notes.txt").write_text("remember the milk\n")
    files = _server("files", npm_servers / "server-filesystem", str(tmp_path))
    path = str(tmp_path / "notes.txt")
    model = ToolModel([("mcp__files__read_text_file", {"path": path})])
    policy = Recorder("allow_once")
    with anyio.fail_after(SCENARIO_TIMEOUT):
        async with mcp_session(coder(model, sandbox=True), tmp_path, [files], policy) as s:
            work = await s.prompt("read")
            assert await work.wait() == "end_turn"
    assert model.tool_results() == ["remember the milk\n"]
    assert len(policy.requests) == 1


async def test_cancelling_a_long_call_on_the_everything_server_ends_the_turn_cancelled(
    npm_servers: Path, tmp_path: Path
) -> None:
    everything = _server("everything", npm_servers / "server-everything")
    long_call = ("mcp__everything__trigger-long-running-operation", {"duration": 60, "steps": 60})
    model = ToolModel([long_call], [("mcp__everything__echo", {"message": "after"})])
    with anyio.fail_after(SCENARIO_TIMEOUT):
        async with mcp_session(coder(model), tmp_path, [everything], allow_all) as session:
            work = await session.prompt("go")
            async for update in work:
                if getattr(update, "status", None) == "in_progress":
                    break
            await session.cancel()
            assert await work.wait() == "cancelled"
            later = await session.prompt("again")
            assert await later.wait() == "end_turn"
            statuses = [c.status for c in session.state.tool_calls.values()]
    assert statuses == ["cancelled", "completed"]
    assert "after" in model.tool_results()[-1]

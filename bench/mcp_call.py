"""The cost of a tool call through MCP against a built-in tool, in the coding agent.

Run: ``.venv/bin/python bench/mcp_call.py [--calls 300] [--batch 20]``.

The coding agent runs in this process (a memory link to the client runtime, as an editor
would see it), driven by a model that asks for ``batch`` calls per reply. Each call is
timed at the client, from its ``tool_call`` (pending) to its final status: the built-in
``read_file`` of a small file, then ``echo`` of the SDK-built test server
(``tests/mcp_servers/py_mcp_server.py``) over stdio (no sandbox; with and without the
line-limiting relay), over Streamable HTTP on 127.0.0.1, and over ACP itself (MCP over
ACP: an ``MCPServer`` the client hosts in its own process, reached through
``mcp/message`` on the same memory link). "Always allow" is answered once, so no call
waits for a person; the first batch of each kind is a warm-up and not counted. Prints
p50 / p90 per call and the MCP overhead (p50 minus the built-in's p50). Nothing here is
a test; there is no target.

Measured here (2 shared cores, load 4.5 from other work, 2026-12-06, mcp 2.3.0), per call:

    built-in read_file           p50    215 µs   p90    399 µs
    MCP echo, stdio              p50  1,648 µs   p90  4,566 µs   (+1,433 µs)
    MCP echo, stdio, no relay    p50  1,587 µs   p90  2,514 µs   (+1,372 µs)
    MCP echo, Streamable HTTP    p50  3,908 µs   p90  8,499 µs   (+3,693 µs)

("no relay": ``McpOptions(max_line=None)``, without the line-limiting relay that stdio
servers run behind by default; it costs about 60 µs a call here.)

MCP over ACP, two runs under load 7.7 from other work (2026-12-06, mcp 2.3.0; the rows of
each run measured together, so compare within a run):

    run 1: built-in p50 209 µs, stdio 3,923 µs, HTTP 7,966 µs, over ACP 3,024 µs (+2,815)
    run 2: built-in p50 290 µs, stdio 1,540 µs, HTTP 8,490 µs, over ACP 1,305 µs (+1,015)

A call over ACP costs about what a stdio call does, a little less: the same two SDK
sessions validate the same JSON-RPC messages, but between tasks of one process (each
message wrapped in an ``mcp/message`` through the memory link and the client runtime)
instead of through a pipe to another process.

The overhead is the SDK's: a pydantic-validated JSON-RPC round trip to another process
(and, over HTTP, a POST answered as an event stream); acp2's own part of a call (report,
permission policy lookup, result conversion) is the same as for a built-in tool.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

from acp2.agent.mcp import McpOptions
from acp2.client import connect_transport
from acp2.coder import CoderSettings, build_coder_agent
from acp2.coder.messages import FINISH_TOOL_CALLS, ModelReply, ModelRequest, ToolRequest
from acp2.coder.tools.confine import CommandPolicy
from acp2.schema import McpServerHttp, McpServerStdio
from acp2.transport.memory import memory_pair

SERVER = Path(__file__).resolve().parents[1] / "tests" / "mcp_servers" / "py_mcp_server.py"


class BatchModel:
    """Asks for ``batches`` replies of ``batch`` calls of ``tool``, then ends the turn."""

    name = "bench"

    def __init__(self, tool: str, args: dict[str, Any], batch: int, batches: int) -> None:
        self.tool, self.args, self.batch, self.left = tool, json.dumps(args), batch, batches

    async def complete(self, request: ModelRequest, sink: Any) -> ModelReply:
        if self.left == 0:
            return ModelReply(text="done")
        self.left -= 1
        calls = tuple(
            ToolRequest(f"c{self.left}_{i}", self.tool, self.args) for i in range(self.batch)
        )
        return ModelReply(tool_calls=calls, finish=FINISH_TOOL_CALLS)


def _always(request: Any) -> Any:
    return request.option_of_kind("allow_always", "allow_once")


async def measure(
    tool: str, args: dict[str, Any], servers: list[Any], cwd: str, a: Any, **limits: Any
) -> list[float]:
    """Per-call seconds (pending -> final status) for ``a.calls`` calls, warm-up excluded."""
    model = BatchModel(tool, args, a.batch, a.calls // a.batch + 1)
    options = McpOptions(connect_timeout=60, **limits)
    settings = CoderSettings(mcp=options, mcp_sandbox=False, commands=CommandPolicy(sandbox="none"))
    agent = build_coder_agent(model, settings=settings, store=":memory:")
    started: dict[str, float] = {}
    took: list[float] = []

    def listener(update: Any, _raw: bytes) -> None:
        call = getattr(update, "tool_call_id", None)
        if call is None:
            return
        if getattr(update, "status", None) in ("completed", "failed"):
            took.append(time.perf_counter() - started.pop(call))
        else:
            started.setdefault(call, time.perf_counter())

    ours, theirs = memory_pair()
    async with anyio.create_task_group() as tg:
        tg.start_soon(agent.serve, theirs)
        async with connect_transport(ours, cwd=cwd, permissions=_always) as client:
            session = await client.new_session(cwd, mcp_servers=servers, on_update=listener)
            work = await session.prompt("go")
            assert await work.wait() == "end_turn"
        await theirs.aclose()
        tg.cancel_scope.cancel()
    return took[a.batch :]


def _line(label: str, took: list[float], base: float | None) -> str:
    p50 = statistics.median(took) * 1e6
    p90 = statistics.quantiles(took, n=10)[-1] * 1e6
    extra = "" if base is None else f"  (+{p50 - base:,.0f} µs over the built-in)"
    return f"{label:<28} p50 {p50:>9,.0f} µs   p90 {p90:>9,.0f} µs   n={len(took)}{extra}"


async def main(a: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as cwd:
        await anyio.Path(cwd, "small.txt").write_text("hello\n")
        builtin = await measure("read_file", {"path": "small.txt"}, [], cwd, a)
        base = statistics.median(builtin) * 1e6
        print(_line("built-in read_file", builtin, None))
        stdio = McpServerStdio(name="py", command=sys.executable, args=[str(SERVER)])
        took = await measure("mcp__py__echo", {"text": "hi"}, [stdio], cwd, a)
        print(_line("MCP echo, stdio", took, base))
        took = await measure("mcp__py__echo", {"text": "hi"}, [stdio], cwd, a, max_line=None)
        print(_line("MCP echo, stdio, no relay", took, base))
        process = subprocess.Popen(  # noqa: ASYNC220 - once, before anything is timed
            [sys.executable, str(SERVER), "http"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        try:
            assert process.stdout is not None
            port = int(process.stdout.readline().split()[1])
            web = McpServerHttp(name="web", url=f"http://127.0.0.1:{port}/mcp")
            took = await measure("mcp__web__echo", {"text": "hi"}, [web], cwd, a)
            print(_line("MCP echo, Streamable HTTP", took, base))
        finally:
            process.kill()
            process.wait()
        took = await measure("mcp__acp__echo", {"text": "hi"}, [_hosted()], cwd, a)
        print(_line("MCP echo, MCP over ACP", took, base))


def _hosted() -> Any:
    """An SDK-built server with the test server's ``echo``, for the client to host."""
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("acp")

    @server.tool()
    def echo(text: str) -> str:
        """Return the text unchanged."""
        return f"echo: {text}"

    return server


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--batch", type=int, default=20)
    anyio.run(main, parser.parse_args())

"""A real MCP server built with the official SDK (``MCPServer``, the SDK's FastMCP), for tests.

``python py_mcp_server.py stdio`` serves on stdin/stdout; ``python py_mcp_server.py http``
serves Streamable HTTP (``sse``: the HTTP+SSE transport at ``/sse``) on an ephemeral port
of 127.0.0.1 and prints ``PORT <n>`` first.
``MCP_TEST_MARKS`` names a FIFO where ``wait`` writes the lines ``started`` and ``cancelled``.
``MCP_TEST_ALIVE`` names a FIFO the server writes ``up`` to at start and keeps open until it
exits, so a test sees it start and end (also inside a sandbox's own pid namespace).

Tools: ``echo`` (text), ``picture`` (an image), ``total`` (structured content),
``broken`` (a tool error), ``wait`` (runs until cancelled), ``crash`` (the process dies),
``flood`` (a huge result, and a lot of stderr), ``group`` (its process group), ``touch``
(create a file), ``header`` (an HTTP request header the server received).
"""

from __future__ import annotations

import os
import socket
import sys

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ImageContent

server = MCPServer("py-test")
#: One red pixel, as a PNG.
PIXEL = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHw"
    "AFBQIAX8jx0gAAAABJRU5ErkJggg=="
)


def _mark(name: str) -> None:
    fifo = os.environ.get("MCP_TEST_MARKS")
    if fifo:
        with open(fifo, "w") as marks:
            marks.write(name + "\n")


@server.tool()
def echo(text: str) -> str:
    """Return the text unchanged."""
    return f"echo: {text}"


@server.tool()
def picture() -> list[ImageContent]:
    """Return a one-pixel image."""
    return [ImageContent(data=PIXEL, mime_type="image/png")]


@server.tool()
def total(a: int, b: int) -> dict[str, int]:
    """Add two numbers (structured result)."""
    return {"sum": a + b}


@server.tool()
def broken() -> str:
    """Always fails."""
    raise ToolError("this tool always fails")


@server.tool()
async def wait() -> str:
    """Run until cancelled."""
    _mark("started")
    try:
        await anyio.sleep_forever()
    finally:
        _mark("cancelled")
    return "never"


@server.tool()
def group() -> str:
    """This server's process group id."""
    return str(os.getpgrp())


@server.tool()
def touch(path: str) -> str:
    """Create the file ``path`` (the sandbox may refuse)."""
    with open(path, "w") as made:
        made.write("made by the MCP server\n")
    return "made"


@server.tool()
def header(name: str, ctx: Context) -> str:
    """The value of the HTTP header ``name`` on this call's request ("" when absent)."""
    return (ctx.headers or {}).get(name.lower(), "")


@server.tool()
def crash() -> str:
    """Kill this server mid-call."""
    os._exit(3)


@server.tool()
def flood() -> str:
    """A result of 8 MB, after 4 MB of stderr."""
    chunk = "x" * 65536 + "\n"
    for _ in range(64):
        sys.stderr.write(chunk)
    sys.stderr.flush()
    return "y" * (8 << 20)


def _serve_http(sse: bool) -> None:
    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    app = server.sse_app() if sse else server.streamable_http_app()
    config = uvicorn.Config(app, log_level="error", lifespan="on")
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    if os.environ.get("MCP_TEST_ALIVE"):
        ALIVE = open(os.environ["MCP_TEST_ALIVE"], "w")  # noqa: SIM115 - open until exit
        ALIVE.write("up\n")
        ALIVE.flush()
    if sys.argv[1:] in (["http"], ["sse"]):
        _serve_http(sse=sys.argv[1] == "sse")
    else:
        server.run("stdio")

"""An MCP server a client hosts in its own process (MCP over ACP), built with the SDK's
``MCPServer`` (its FastMCP): ``shout`` upper-cases text, ``hold`` waits until cancelled
and records that it was, ``ping_back`` pings the agent's MCP client (a request from the
server to the agent: ``mcp/message`` the other way) and tells it its tools changed (a
notification that way)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
from mcp.server.mcpserver import Context, MCPServer


def hosted_server(name: str = "tools") -> tuple[MCPServer, dict[str, anyio.Event]]:
    """A fresh server, and the events it sets: ``started`` and ``cancelled`` by its
    ``hold`` tool, ``opened`` and ``ended`` as a server session (one per MCP connection)
    begins and ends."""
    marks = {name: anyio.Event() for name in ("started", "cancelled", "opened", "ended")}

    @asynccontextmanager
    async def lifespan(_: Any) -> AsyncIterator[None]:
        marks["opened"].set()
        try:
            yield
        finally:
            marks["ended"].set()

    server = MCPServer(name, lifespan=lifespan)

    @server.tool()
    def shout(text: str) -> str:
        """Return the text in capitals."""
        return text.upper() + "!"

    @server.tool()
    async def hold() -> str:
        """Run until cancelled."""
        marks["started"].set()
        try:
            await anyio.sleep_forever()
        finally:
            marks["cancelled"].set()
        return "never"

    @server.tool()
    async def ping_back(ctx: Context) -> str:
        """Ping the agent, tell it the tools changed, then answer."""
        await ctx.session.send_ping()
        await ctx.notify_tools_changed()
        return "pinged"

    return server, marks

"""The MCP servers a client gives a session, connected for the agent author.

Every ``session/new`` and ``session/resume`` carries ``mcpServers``. When an
:class:`~acp2.agent.Agent` advertises the transports (``mcp_stdio`` / ``mcp_http``), the
runtime starts connecting each server in the background as the session opens, through
the official MCP Python SDK (the optional ``acp2[mcp]`` extra, imported only when a
session has servers). A prompt handler reaches them as ``turn.mcp``::

    @agent.prompt
    async def on_prompt(turn):
        for server in await turn.mcp.servers():
            if server.error is None:
                result = await server.call_tool("echo", {"text": "hi"})

A server that fails to start, dies, hangs or answers garbage costs that server only: its
``error`` says why, and its calls fail with :class:`~acp2.errors.McpServerError`. The
servers stop (stdio: their process group) when the session closes or its connection ends.
"""

from acp2.agent.mcp.hub import SessionMcp
from acp2.agent.mcp.options import McpOptions, StdioLaunch
from acp2.agent.mcp.server import McpServerClient

__all__ = ["McpOptions", "McpServerClient", "SessionMcp", "StdioLaunch"]

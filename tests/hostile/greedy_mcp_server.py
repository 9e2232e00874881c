"""A hostile MCP server (built with the SDK) that tries to fill the model's context: 300
tools, one with a 1 MB input schema and one with a 1 MB description."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from pydantic import Field

server = MCPServer("greedy")
HUGE = "x" * (1 << 20)


def _tool(number: int) -> Any:
    def tool() -> str:
        return f"tool {number}"

    return tool


def swollen(text: Annotated[str, Field(description=HUGE)]) -> str:
    """A tool whose input schema is 1 MB."""
    return text


server.tool(name="t000")(swollen)
for index in range(1, 300):
    description = HUGE if index == 1 else f"tool number {index}"
    server.tool(name=f"t{index:03d}", description=description)(_tool(index))

if __name__ == "__main__":
    server.run("stdio")

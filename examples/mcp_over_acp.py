"""Give any ACP agent one custom tool that lives in this process (MCP over ACP).

    python examples/mcp_over_acp.py "What time is it in UTC?" -- acp2 agent

The tool is an MCP server built with the official MCP SDK; acp2's client serves it to
the agent through the ACP connection itself: no extra process, no port. The agent must
advertise ``session.mcp.acp`` (acp2's own agent does); otherwise the session is refused.
"""

import sys
from datetime import UTC, datetime

import anyio
from mcp.server.mcpserver import MCPServer

from acp2.client import allow_all, connect

tools = MCPServer("clock")


@tools.tool()
def utc_now() -> str:
    """The current date and time in UTC, ISO 8601."""
    return datetime.now(UTC).isoformat(timespec="seconds")


async def main(prompt: str, agent: list[str]) -> None:
    """Ask ``agent`` (a command line) ``prompt`` with the clock tool; print its answer."""
    async with connect(agent, permissions=allow_all) as client:
        session = await client.new_session(mcp_servers=[tools])
        work = await session.prompt(prompt)
        print("stopped:", await work.wait(), file=sys.stderr)
        print(session.state.agent_text())


if __name__ == "__main__":
    split = sys.argv.index("--")
    anyio.run(main, " ".join(sys.argv[1:split]), sys.argv[split + 1 :])

"""An agent written with the acp2 library that uses its session's MCP servers (``turn.mcp``):
each prompt calls ``echo`` with the prompt's text on every server and says the answers.

``python mcp_agent.py`` advertises stdio and HTTP servers; ``--stdio-only`` only stdio.
"""

from __future__ import annotations

import sys

from acp2.agent import Agent, Turn

agent = Agent(
    "mcp-probe", mcp_stdio=True, mcp_http="--stdio-only" not in sys.argv, store=":memory:"
)


@agent.prompt
async def on_prompt(turn: Turn) -> str:
    for server in await turn.mcp.servers():
        if server.error is not None:
            await turn.say(f"{server.name}: unavailable ({server.error})\n")
            continue
        result = await server.call_tool("echo", {"text": turn.text})
        await turn.say(f"{server.name}: {result.content[0].text}\n")
    return "end_turn"


if __name__ == "__main__":
    agent.run()

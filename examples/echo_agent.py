"""The smallest useful ACP v2 agent: it streams the prompt back, word by word.

Run it from any ACP v2 client, e.g.:  acp2 run "hello there" -- python examples/echo_agent.py
"""

from acp2.agent import Agent, Turn

agent = Agent("echo-agent", version="1.0", title="Echo agent")


@agent.prompt
async def echo(turn: Turn) -> str:
    """Send the prompt's words back as streamed agent text, then end the turn."""
    words = turn.text.split()
    if not words:
        await turn.say("(nothing to echo)")
    for i, word in enumerate(words):
        await turn.say(word if i == 0 else f" {word}")
    return "end_turn"


@agent.ext_method("_echo/ping")
async def ping(params: object) -> dict[str, bool]:
    """An extension request: clients may call `_echo/ping` to check the agent is alive."""
    return {"pong": True}


if __name__ == "__main__":
    agent.run()

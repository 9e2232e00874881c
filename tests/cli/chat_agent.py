"""A small ACP agent for the ``acp2 chat`` terminal tests: config options (a model and a
mode), a command named like a built-in (``help``), and a few prompt words.

Run as ``python chat_agent.py [STORE]`` (STORE: an SQLite file, so sessions survive the
process). The prompt's first word: ``show`` lists the prompt's blocks and the current
model; ``status TITLE`` sets the title and reports usage with a cost; ``long N`` shows a
tool call with N lines of output; ``gate FIFO`` waits until a line can be read from the
named pipe FIFO (the test decides when the turn ends); ``crash`` exits the process
mid-turn; ``/help`` answers ``agent help
ran``; anything else is echoed.
"""

from __future__ import annotations

import sys
from typing import Any

import anyio

from acp2.agent import Agent, AgentSession, Turn
from acp2.schema import (
    AvailableCommand,
    Content,
    EmbeddedResource,
    ResourceLink,
    SessionConfigSelect,
    SessionConfigSelectOption,
    SessionInfoUpdate,
    TextContent,
)


def _select(config_id: str, category: str, values: list[tuple[str, str]]) -> Any:
    choices = [SessionConfigSelectOption(value=v, name=n) for v, n in values]
    return SessionConfigSelect(
        config_id=config_id,
        name=config_id.title(),
        category=category,
        current_value=values[0][0],
        options=choices,
    )


def config_options(session: AgentSession) -> list[Any]:
    """A model and a mode select."""
    return [
        _select("model", "model", [("small", "Small Model"), ("large", "Large Model")]),
        _select("mode", "mode", [("ask", "Ask first"), ("code", "Just code")]),
    ]


agent = Agent(
    "chat-test-agent",
    version="1",
    title="chat test agent",
    store=sys.argv[1] if len(sys.argv) > 1 else ":memory:",
    config_options=config_options,
    commands=[
        AvailableCommand(name="help", description="The agent's own help"),
        AvailableCommand(name="deploy", description="Deploy the app"),
        AvailableCommand(  # a skill: its description is pages long in real agents
            name="skill",
            description="Write release notes.\nSECOND LINE of the skill.\n" + "more " * 200,
        ),
    ],
)


def _describe(block: Any) -> str:
    if isinstance(block, TextContent):
        return "text"
    if isinstance(block, EmbeddedResource):
        text = block.resource.text
        return f"resource {block.resource.uri} {text!r}"
    if isinstance(block, ResourceLink):
        return f"link {block.name} {block.uri}"
    return type(block).__name__


def _model(turn: Turn) -> str:
    stored = turn.session.config_options or []
    for option in stored:
        if getattr(option, "config_id", None) == "model":
            return str(option.current_value)
    return "?"


async def _long(turn: Turn, count: int) -> None:
    call = await turn.tool_call("Print lines", kind="execute")
    text = "\n".join(f"output line {i}" for i in range(1, count + 1))
    await call.complete(content=[Content(content=TextContent(text=text))])


def _read_line(path: str) -> str:
    with open(path) as pipe:
        return pipe.readline()


@agent.prompt
async def handle(turn: Turn) -> str:
    """Act on the first word of the prompt."""
    text = turn.text.strip()
    word, _, arg = text.partition(" ")
    if word == "/help":
        await turn.say("agent help ran")
    elif word == "show":
        await turn.say(f"model={_model(turn)}; " + "; ".join(map(_describe, turn.prompt)))
    elif word == "status":
        await turn.send(SessionInfoUpdate(title=arg))
        await turn.usage(1500, 100000, cost=(0.25, "USD"))
        await turn.say("status set")
    elif word == "long":
        await _long(turn, int(arg))
        await turn.say("long done")
    elif word == "crash":  # the process dies mid-turn, as a crashing agent does
        import os

        os._exit(7)
    elif word == "gate":
        await turn.say("at the gate")
        await anyio.to_thread.run_sync(_read_line, arg, abandon_on_cancel=True)
        await turn.say(" - gate opened")
    else:
        await turn.say(f"echo: {text}")
    return "end_turn"


if __name__ == "__main__":
    agent.run()

"""The agent every e2e test drives, in process (memory link) or as a script (stdio link).

``build_agent(store)`` returns an :class:`acp2.agent.Agent` whose prompt handler runs the
scenario named by the prompt's first word (the rest is its argument):

* ``echo TEXT``: TEXT back as one message chunk.
* ``show``: the whole output vocabulary: two message chunks, a thought, a plan updated
  once, a tool call that starts, gets content and completes, and a usage report.
* ``ask``: one permission request about a tool call; the call completes when allowed and
  fails when denied, and the reply says which.
* ``elicit``: one form elicitation (a required ``name``); the reply is the action and
  the name, or ``unsupported`` / ``bad`` when the client cannot ask or answers badly.
* ``wait``: runs until cancelled.
* ``raise``: the handler raises (the runtime turns it into idle / ``error``).

The extension request ``_e2e/boom`` raises too, ``_e2e/size`` answers the length of its
``text`` param, and ``_e2e/pid`` the agent's process id. Run as a script (``python
e2e_agent.py STORE``) it serves the same agent on its own stdin/stdout, with its history
in the SQLite file STORE.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import msgspec

from acp2.agent import Agent, ElicitationContentError, ElicitationUnsupported, Turn

__all__ = ["AGENT_NAME", "BOOM", "build_agent"]

AGENT_NAME = "acp2-e2e-agent"
#: The message the failing handlers raise with (tests look for it on the client side).
BOOM = "the e2e agent failed on purpose"

Scenario = Callable[[Turn, str], Awaitable[str]]


async def echo(turn: Turn, arg: str) -> str:
    """Say ``arg`` back in one chunk (also the big-update round trip)."""
    await turn.say(arg)
    return "end_turn"


async def show(turn: Turn, arg: str) -> str:
    """Send one of each kind of output a turn produces."""
    await turn.think("planning")
    await turn.plan(["look", "write"])
    call = await turn.tool_call("Write notes", kind="edit")
    await call.start()
    await call.add_content("wrote 3 lines")
    await call.complete()
    await turn.plan([{"content": "look", "status": "completed"}, "write"])
    await turn.say("all ")
    await turn.say("done")
    await turn.usage(120, 1000, cost=(0.25, "USD"))
    return "end_turn"


async def ask(turn: Turn, arg: str) -> str:
    """Ask permission for a tool call and act on the answer."""
    call = await turn.tool_call("Delete build/", kind="delete")
    answer = await turn.request_permission("Delete build/?", tool_call=call)
    if answer.approved:
        await call.complete()
        await turn.say("allowed")
    else:
        await call.fail()
        await turn.say("denied")
    return "end_turn"


async def elicit(turn: Turn, arg: str) -> str:
    """Ask for a name with a form and say what came back."""
    schema = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
    try:
        result = await turn.elicit("Your name?", schema=schema)
    except ElicitationUnsupported:
        await turn.say("unsupported")
    except ElicitationContentError:
        await turn.say("bad")
    else:
        await turn.say(f"{result.action} {(result.content or {}).get('name')}")
    return "end_turn"


async def wait(turn: Turn, arg: str) -> str:
    """Keep the work running until the client cancels it."""
    await turn.say("waiting")
    await anyio.sleep_forever()
    return "end_turn"  # pragma: no cover - cancelled above


async def fail(turn: Turn, arg: str) -> str:
    """Raise from the handler."""
    await turn.say("about to fail")
    raise RuntimeError(BOOM)


SCENARIOS: dict[str, Scenario] = {
    "echo": echo,
    "show": show,
    "ask": ask,
    "elicit": elicit,
    "wait": wait,
    "raise": fail,
}


def build_agent(store: str) -> Agent:
    """A fresh agent with its history in the SQLite file ``store``."""
    agent = Agent(AGENT_NAME, version="1.0", store=store)

    @agent.prompt
    async def handle(turn: Turn) -> str:
        word, _, arg = turn.text.partition(" ")
        return await SCENARIOS[word](turn, arg)

    @agent.ext_method("_e2e/boom")
    async def boom(params: Any) -> Any:
        raise RuntimeError(BOOM)

    @agent.ext_method("_e2e/size")
    async def size(params: Any) -> Any:
        # Extension params arrive as the raw JSON bytes of ``params``.
        return {"size": len(msgspec.json.decode(params)["text"])}

    @agent.ext_method("_e2e/pid")
    async def pid(params: Any) -> Any:
        return {"pid": os.getpid()}

    return agent


if __name__ == "__main__":
    build_agent(sys.argv[1]).run()

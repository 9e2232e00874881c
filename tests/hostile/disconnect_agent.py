"""An agent whose prompt handler streams forever (run as a script).

``python disconnect_agent.py STORE``: serves one client on stdio (``Agent.run``) with its
history in the SQLite file ``STORE``. The handler loops ``await turn.say(...)`` and never
returns; when it is cancelled it writes ``handler cancelled after <n> chunks`` to stderr
(the test's proof that the runtime cancelled it) before letting the cancellation go on.
"""

from __future__ import annotations

import sys

import anyio

from acp2.agent import Agent, Turn

agent = Agent("disconnect-agent", version="1.0", store=sys.argv[1])


@agent.prompt
async def forever(turn: Turn) -> str:
    """Stream small chunks until cancelled."""
    sent = 0
    try:
        while True:
            await turn.say(f"chunk {sent} ")
            sent += 1
    except anyio.get_cancelled_exc_class():
        sys.stderr.write(f"handler cancelled after {sent} chunks\n")
        sys.stderr.flush()
        raise


if __name__ == "__main__":
    agent.run()

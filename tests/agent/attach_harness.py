"""Several raw clients of one Agent: :func:`clients` serves the same Agent object on one
connection per client (:func:`helpers.inprocess.serving`), each with its own principal,
and yields a recording :class:`~agent_harness.Harness` per client.

On exit every client closes its end, every connection must finish serving (bounded) and
every frame each client recorded must be valid under both drafts.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import anyio
from agent_harness import Harness, harness_over

from acp2.agent import Agent
from helpers.inprocess import serving

__all__ = ["ATTACH", "Clients", "attach", "clients"]

#: The extension method under test (written here as the wire says it).
ATTACH = "_acp2/session/attach"


class Clients(list[Harness]):
    """The harnesses, in the order of the principals; ``served[i]`` is set when the
    agent's serving of the i-th connection returned."""

    served: list[anyio.Event]


@asynccontextmanager
async def clients(agent: Agent, *principals: object) -> AsyncIterator[Clients]:
    """Serve ``agent`` once per principal; yield the initialized client harnesses."""
    found = Clients()
    async with serving(agent, wait=True) as agents, AsyncExitStack() as stack:
        found.served = agents.ended
        for principal in principals:
            harness = await stack.enter_async_context(
                harness_over(agents.open(principal=principal))
            )
            await harness.initialize()
            found.append(harness)
        yield found
    for harness in found:
        problems = harness.problems()
        assert not problems, "invalid frames:\n" + "\n".join(problems[:20])


async def attach(harness: Harness, session_id: str, role: str = "observer") -> Any:
    """``_acp2/session/attach``; return the result."""
    return await harness.call(ATTACH, {"sessionId": session_id, "role": role})

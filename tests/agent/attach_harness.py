"""Several raw clients of one Agent: :func:`clients` serves the same Agent object on one
memory pair per client, each with its own principal, and yields a recording
:class:`~agent_harness.Harness` per client.

On exit every client closes its end, every connection must finish serving (bounded) and
every frame each client recorded must be valid under both drafts.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import anyio
from agent_harness import TIMEOUT, Harness, harness_over

from acp2.agent import Agent
from acp2.agent.connection import serve_connection
from acp2.transport.memory import memory_pair

__all__ = ["ATTACH", "Clients", "attach", "clients"]

#: The extension method under test (written here as the wire says it).
ATTACH = "_acp2/session/attach"


class Clients(list[Harness]):
    """The harnesses, in the order of the principals, and each one's serving task."""

    def __init__(self) -> None:
        super().__init__()
        self.served: list[anyio.Event] = []


@asynccontextmanager
async def clients(agent: Agent, *principals: object) -> AsyncIterator[Clients]:
    """Serve ``agent`` once per principal; yield the initialized client harnesses."""
    found = Clients()
    async with anyio.create_task_group() as tg, AsyncExitStack() as stack:
        for principal in principals:
            ours, theirs = memory_pair()
            served = anyio.Event()
            tg.start_soon(_serve, agent, theirs, principal, served)
            harness = await stack.enter_async_context(harness_over(ours))
            await harness.initialize()
            found.append(harness)
            found.served.append(served)
        yield found
        await stack.aclose()
        with anyio.fail_after(TIMEOUT):
            for served in found.served:
                await served.wait()
    for harness in found:
        problems = harness.problems()
        assert not problems, "invalid frames:\n" + "\n".join(problems[:20])


async def _serve(agent: Agent, transport: Any, principal: object, served: anyio.Event) -> None:
    try:
        await serve_connection(agent, transport, principal=principal)
    finally:
        served.set()


async def attach(harness: Harness, session_id: str, role: str = "observer") -> Any:
    """``_acp2/session/attach``; return the result."""
    return await harness.call(ATTACH, {"sessionId": session_id, "role": role})

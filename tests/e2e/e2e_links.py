"""The transports the e2e suite runs over: one opener per transport, same signature.

An opener is ``open(store, *, cwd, permissions, **options)`` (``options``: more keyword
arguments of :func:`acp2.client.connect`, e.g. ``elicitation``): an async context
manager that starts a fresh agent (:func:`e2e_agent.build_agent`, history in the SQLite
file ``store``) behind the transport and yields an initialized
:class:`acp2.client.ClientConnection`. Leaving it disconnects the client and stops
the agent (over the memory pair and stdio, the agent must end on its own, bounded).
A test that opens twice on one ``store`` sees an agent restart.

The transports: ``memory`` (the agent in this process), ``stdio`` (the agent script as
a subprocess on real pipes), ``websocket`` and ``http`` (the agent behind acp2's serve
app, token required, under a real uvicorn on 127.0.0.1, reached by acp2's remote client
over a WebSocket or Streamable HTTP), ``v1-memory`` and ``v1-stdio`` (acp2's client
through the back bridge to the agent speaking v1 through its front bridge, in process or
as the script on real pipes). To run the whole suite over another transport, add an
opener to :data:`LINKS`.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

from e2e_agent import build_agent

from acp2.client import ClientConnection, PermissionPolicy, connect
from acp2.transport.stdio import spawn_agent
from helpers.inprocess import served, v1_bridged
from helpers.timeouts import TIMEOUT

__all__ = ["AGENT_SCRIPT", "IN_PROCESS", "LINKS", "V1", "Opener"]

#: The agent script the stdio link runs with this interpreter.
AGENT_SCRIPT = Path(__file__).with_name("e2e_agent.py")

Opener = Callable[..., AbstractAsyncContextManager[ClientConnection]]


def agent_link(over: str) -> Opener:
    """The opener that serves a fresh agent in this process and joins the client ``over``
    a memory pair, both v1 bridges, or the serve app under uvicorn on 127.0.0.1
    (:func:`helpers.inprocess.served`). Over the memory pair, the agent must notice the
    client closed its end and return on its own."""

    @asynccontextmanager
    async def link(
        store: Path, *, cwd: Path, permissions: PermissionPolicy, **options: Any
    ) -> AsyncIterator[ClientConnection]:
        agent = build_agent(str(store))
        joined = served(
            agent, over=over, wait=over == "memory", cwd=cwd, permissions=permissions, **options
        )
        try:
            async with joined as client:
                yield client
        finally:
            agent.history().close()

    return link


@asynccontextmanager
async def stdio_link(
    store: Path, *, cwd: Path, permissions: PermissionPolicy, **options: Any
) -> AsyncIterator[ClientConnection]:
    """The production path: the agent script in a subprocess, over its real stdin/stdout."""
    argv = [sys.executable, str(AGENT_SCRIPT), str(store)]
    async with connect(argv, cwd=cwd, permissions=permissions, **options) as client:
        yield client


@asynccontextmanager
async def v1_stdio_link(
    store: Path, *, cwd: Path, permissions: PermissionPolicy, **options: Any
) -> AsyncIterator[ClientConnection]:
    """The agent script as a subprocess speaking v1 on real pipes (its front bridge),
    reached through the back bridge in this process."""
    argv = [sys.executable, str(AGENT_SCRIPT), str(store)]
    async with (
        spawn_agent(argv, grace=TIMEOUT) as process,
        v1_bridged(process, cwd=cwd, permissions=permissions, **options) as client,
    ):
        yield client


#: Every transport the suite runs over, by test id.
LINKS: dict[str, Opener] = {
    "memory": agent_link("memory"),
    "stdio": stdio_link,
    "websocket": agent_link("websocket"),
    "http": agent_link("http"),
    "v1-memory": agent_link("v1"),
    "v1-stdio": v1_stdio_link,
}
#: The transports through both v1 bridges (acp2's agent speaking v1 is the v1 agent, and
#: the back bridge the v1 client): a test whose feature v1 cannot carry is ``not_over`` these.
V1 = ("v1-memory", "v1-stdio")
#: The transports with the agent in the test's own process.
IN_PROCESS = ("http", "memory", "v1-memory", "websocket")

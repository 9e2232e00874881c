"""The two ways a v2 client meets the back bridge, for the in-process back tests.

``in_process``: acp2's client drives the v1 agent itself (``connect_transport`` reads
its v1 ``initialize`` answer and joins the bridge in process, no v2 connection between
them). ``connection``: the bridge serves a v2 connection (``serve_back_transports``, as
``acp2 bridge`` does) and the client drives that. Each test module that uses
:func:`client_of` runs every test both ways (its ``way`` fixture sets :data:`WAY`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import anyio

import acp2.compat.v1.methods as v1m
import acp2.compat.v1.schema as v1
from acp2.bridge.back import serve_back_transports
from acp2.client import ClientConnection, connect_transport
from acp2.rpc import Connection
from acp2.transport.memory import memory_pair

WAYS = ("in_process", "connection")
#: The way of the running test (set by the test module's ``way`` fixture).
WAY = "in_process"


@asynccontextmanager
async def client_of(
    setup: Callable[[Connection], None],
    result: v1.InitializeResponse,
    *,
    files: bool = False,
    terminals: bool = False,
    **connect: Any,
) -> AsyncIterator[tuple[Connection, ClientConnection]]:
    """An in-process v1 agent (a ``Connection`` with the v1 method table, its handlers
    installed by ``setup``, ``initialize`` answered ``result``) and acp2's client of it,
    met the way :data:`WAY` says (``files`` / ``terminals``: what the bridge serves)."""
    if WAY == "in_process":
        client_end, agent_end = memory_pair()
        agent = Connection(agent_end, name="in-process v1 agent")
        setup(agent)

        async def initialize(params: v1.InitializeRequest) -> v1.InitializeResponse:
            return result

        agent.on(v1m.INITIALIZE, initialize)
        async with agent:
            serving = {"files": files, "terminals": terminals}
            async with connect_transport(client_end, **serving, **connect) as client:
                yield agent, client
        return
    client_end, bridge_v2 = memory_pair()
    bridge_v1, agent_end = memory_pair()
    agent = Connection(agent_end, name="in-process v1 agent")
    setup(agent)
    serve = partial(
        serve_back_transports, bridge_v2, bridge_v1, result, files=files, terminals=terminals
    )
    async with agent, anyio.create_task_group() as tg:
        tg.start_soon(serve)
        async with connect_transport(client_end, **connect) as client:
            yield agent, client
        tg.cancel_scope.cancel()

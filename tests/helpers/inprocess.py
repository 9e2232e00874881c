"""An agent served in this process, and the client runtime connected to it.

:func:`served` runs ``agent.serve`` on one end of :func:`acp2.transport.memory.memory_pair`
and yields an initialized :class:`acp2.client.ClientConnection` on the other, so a test
drives the real client and agent runtimes without a subprocess. :func:`sole_exception`
unwraps the one-exception groups task groups raise, so tests can ``pytest.raises`` the
exception itself.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import anyio

from acp2.client import ClientConnection, connect_transport
from acp2.transport.memory import memory_pair

__all__ = ["served", "sole_exception"]


@asynccontextmanager
async def served(agent: Any, **connect_kwargs: Any) -> AsyncIterator[ClientConnection]:
    """Serve ``agent`` (anything with ``async serve(transport)``) in process; yield the
    client, connected with ``connect_kwargs`` (``cwd``, ``permissions``, ...).

    On exit the link is closed and the agent task cancelled; a single exception from
    either side is raised as itself.
    """
    ours, theirs = memory_pair()
    with sole_exception():
        async with anyio.create_task_group() as tg:
            tg.start_soon(agent.serve, theirs)
            async with connect_transport(ours, **connect_kwargs) as client:
                yield client
            await theirs.aclose()
            tg.cancel_scope.cancel()


@contextmanager
def sole_exception() -> Iterator[None]:
    """Re-raise an exception group holding (at any depth) one exception as that exception."""
    try:
        yield
    except BaseExceptionGroup as group:
        sole: BaseException = group
        while isinstance(sole, BaseExceptionGroup) and len(sole.exceptions) == 1:
            sole = sole.exceptions[0]
        if sole is group:
            raise
        raise sole from None

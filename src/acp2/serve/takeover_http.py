"""Taking a durable Streamable HTTP connection over when its node died.

A request (an SSE reopen, a POST) naming a connection this node does not hold looks its
cursor up in the store (:mod:`acp2.store.cursors`). When it is there, belongs to the
request's principal and can be rebuilt exactly (:func:`acp2.serve.takeover_plan.plan_streams`),
the connection is made here under the same id (:func:`acp2.serve.takeover_streams.restore_streams`)
and the request goes on as if it had reached the node that died: a reopen resends what
its stream missed after its ``Last-Event-ID``, a POST's ``Acp2-Seq`` continues. The
takeover runs in a task of its own, and every request naming the connection meanwhile
(the client reopens all its streams at once) waits for the same one; the WebSocket path
sees the id in ``registry.restoring`` and asks its socket to come back later.

What cannot be rebuilt answers as an unknown connection does (404, or 410 for a cursor
too old): the client falls back to a new connection and ``session/resume``.
"""

from __future__ import annotations

import asyncio
import logging

from acp2.serve import takeover_streams
from acp2.serve.registry import Registry
from acp2.serve.remote_connection import RemoteConnection

__all__ = ["held_connection"]

logger = logging.getLogger(__name__)

Found = RemoteConnection | tuple[int, str]
_UNKNOWN = (404, "Unknown Acp-Connection-Id")


async def held_connection(
    registry: Registry, connection_id: str, principal: str, *, take_over: bool = True
) -> Found:
    """The live connection ``connection_id`` (after a takeover under way, or one this
    request starts when ``take_over``), or the status and text refusing it. The
    connection's principal is the caller's to check."""
    task = registry.taking_over.get(connection_id)
    if task is None:
        connection = registry.get(connection_id)
        if connection is not None:
            return connection
        if not take_over or registry.backing is None:
            return _UNKNOWN
        started = _start(registry, connection_id, principal)
        if isinstance(started, tuple):
            return started
        task = started
    return await asyncio.shield(task)


def _start(
    registry: Registry, connection_id: str, principal: str
) -> asyncio.Task[Found] | tuple[int, str]:
    """Plan the takeover of ``connection_id`` and start it, or refuse it."""
    backing = registry.backing
    assert backing is not None
    cursor = takeover_streams.load(backing, connection_id, registry.config.grace)
    if cursor is None or cursor.kind != "http":
        return _UNKNOWN
    if cursor.principal != principal:
        return 403, "This connection belongs to another principal"
    if connection_id in registry.restoring:
        return 503, "The connection is being restored, try again"
    busy = registry.busy(principal)
    if busy is not None:
        return 503, busy
    try:
        result = takeover_streams.plan_streams(cursor)
    except takeover_streams.Unrestorable as exc:
        logger.info("not taking connection %s over: %s", connection_id, exc.reason)
        return _status(exc)
    task = asyncio.get_running_loop().create_task(_take_over(registry, result))
    registry.taking_over[connection_id] = task
    registry.adopt(task)
    registry.restoring.add(connection_id)
    task.add_done_callback(lambda _: _done(registry, connection_id))
    return task


async def _take_over(registry: Registry, result: takeover_streams.StreamsPlan) -> Found:
    backing = registry.backing
    assert backing is not None
    connection_id = result.cursor.id
    try:
        return await takeover_streams.restore_streams(registry, backing, result)
    except takeover_streams.Unrestorable as exc:
        # The row stays, as a refused WebSocket's does: its owner may be alive (a request
        # sent to the wrong node), and its writes must keep counting on it.
        logger.warning("could not take connection %s over: %s", connection_id, exc.reason)
        return _status(exc)
    except Exception:
        logger.exception("could not take connection %s over", connection_id)
        return _UNKNOWN


def _done(registry: Registry, connection_id: str) -> None:
    registry.taking_over.pop(connection_id, None)
    registry.restoring.discard(connection_id)


def _status(exc: takeover_streams.Unrestorable) -> tuple[int, str]:
    """The HTTP answer standing for ``exc``'s close code (4410: 410, else 404)."""
    status = 410 if exc.code == 4410 else 404
    return status, f"The connection cannot be resumed here: {exc.reason[:120]}"

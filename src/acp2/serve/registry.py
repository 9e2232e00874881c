"""Every live remote connection of one application, the task serving each, and the reaper.

:meth:`Registry.create` makes a :class:`~acp2.serve.remote_connection.RemoteConnection` and starts
its agent side in a task (``serve(connection)``); when that task ends, for any reason,
the connection ends and is forgotten. The reaper ends connections that stayed without a
stream and without a request past their limit: ``resume_grace`` for a durable one (its
link dropped), ``idle_timeout`` for a plain one.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections.abc import Awaitable, Callable
from typing import Any

from acp2.serve.config import ServeConfig
from acp2.serve.cursor import CursorRecorder
from acp2.serve.remote_connection import Kind, RemoteConnection
from acp2.serve.takeover_streams import Backing
from acp2.transport.durable import Retention

__all__ = ["Registry", "ServeFn"]

logger = logging.getLogger(__name__)

#: Seconds between two prunings of old stream cursors.
PRUNE_EVERY = 60.0

#: Serves the agent side of one connection until its input ends.
ServeFn = Callable[[RemoteConnection], Awaitable[None]]


class Registry:
    """The connections of one application, by ``Acp-Connection-Id``."""

    def __init__(self, config: ServeConfig, serve: ServeFn, backing: Backing | None = None) -> None:
        self.config = config
        self._serve = serve
        #: Where durable connections keep their cursors, so another node can take them
        #: over (None: a connection lives and dies with this process).
        self.backing = backing if config.durable else None
        #: Streams being taken over from their stored cursors (:mod:`acp2.serve.takeover_streams`).
        self.restoring: set[str] = set()
        #: The Streamable HTTP takeovers under way (:mod:`acp2.serve.takeover_http`): every
        #: request naming the connection meanwhile waits for the same one.
        self.taking_over: dict[str, asyncio.Task[RemoteConnection | tuple[int, str]]] = {}
        self._pruned_at = time.monotonic()
        self._connections: dict[str, RemoteConnection] = {}
        #: Live connections per principal (for ``max_connections_per_principal``).
        self._owned: dict[str, int] = {}
        #: True when every connection's agent side is a subprocess (``max_agents``).
        self.spawns = False
        #: Agent sides still running: a removed connection's subprocess may take a moment
        #: to exit, and it counts until it has.
        self.serving = 0
        self._tasks: set[asyncio.Task[Any]] = set()
        self._reaper: asyncio.Task[None] | None = None

    def __len__(self) -> int:
        return len(self._connections)

    def connections(self) -> list[RemoteConnection]:
        """The live connections, oldest first."""
        return list(self._connections.values())

    def full(self) -> bool:
        """True when ``max_connections`` connections are live."""
        return len(self._connections) >= self.config.max_connections

    def busy(self, principal: str) -> str | None:
        """Why a new connection for ``principal`` is refused now (the server is full, the
        principal holds its share, or every agent subprocess slot is taken), or None."""
        config = self.config
        if self.full():
            return "Too many connections"
        if self._owned.get(principal, 0) >= config.max_connections_per_principal:
            return "Too many connections for this principal"
        if self.spawns and self.serving >= config.max_agents:
            return "Too many agent processes"
        return None

    def create(
        self,
        principal: str,
        kind: Kind,
        retention: Retention | None,
        *,
        connection_id: str | None = None,
    ) -> RemoteConnection:
        """A new connection for ``principal``, its agent side started; a durable one
        records its cursor when the registry has a backing. ``connection_id``
        is for a stream taken over from another node (a new random id otherwise)."""
        connection = RemoteConnection(
            connection_id or secrets.token_urlsafe(18), principal, kind, self.config, retention
        )
        if self.backing is not None and retention is not None:
            connection.recorder = self._recorder(connection.id, principal, kind)
        self._connections[connection.id] = connection
        self._owned[principal] = self._owned.get(principal, 0) + 1
        self.serving += 1
        self.adopt(asyncio.get_running_loop().create_task(self._run(connection)))
        if self._reaper is None or self._reaper.done():
            self._reaper = asyncio.get_running_loop().create_task(self._reap_forever())
        return connection

    def _recorder(self, connection_id: str, principal: str, kind: Kind) -> CursorRecorder | None:
        """A cursor recorder for a new durable connection; None (it lives and dies with
        this process) when the cursor store cannot be opened."""
        assert self.backing is not None
        try:
            return CursorRecorder(self.backing.cursors, connection_id, principal, kind)
        except Exception as exc:
            logger.warning("stream cursors are off, the cursor store failed: %s", exc)
            return None

    def adopt(self, task: asyncio.Task[Any]) -> None:
        """Keep ``task`` (work on behalf of a connection, e.g. a takeover) until it ends;
        :meth:`aclose` waits for it as for the agent sides."""
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def get(self, connection_id: str) -> RemoteConnection | None:
        """The live connection with this id, or None."""
        connection = self._connections.get(connection_id)
        return connection if connection is not None and not connection.closed else None

    def remove(self, connection_id: str) -> bool:
        """End the connection (DELETE); False when it is unknown."""
        connection = self._connections.pop(connection_id, None)
        if connection is None:
            return False
        self._disown(connection.principal)
        connection.end()
        return True

    def _disown(self, principal: str) -> None:
        left = self._owned.pop(principal, 1) - 1
        if left:
            self._owned[principal] = left

    def reap(self, now: float | None = None) -> int:
        """End every connection idle past its limit; return how many."""
        now = time.monotonic() if now is None else now
        reaped = 0
        for connection in list(self._connections.values()):
            if connection.recorder is not None:
                connection.recorder.keepalive(self.config.grace / 3)
        self._prune(now)
        for connection in list(self._connections.values()):
            limit = self.config.grace if connection.durable else self.config.idle_timeout
            if connection.idle_for(now) > limit:
                logger.info("ending idle remote connection %s", connection.id)
                self.remove(connection.id)
                reaped += 1
        return reaped

    def _prune(self, now: float) -> None:
        """Now and then, delete the cursors no node resumed within the grace (their
        streams' nodes died and their clients went elsewhere)."""
        if self.backing is None or now - self._pruned_at < PRUNE_EVERY:
            return
        self._pruned_at = now
        try:
            self.backing.cursors.prune(self.config.grace + self.backing.lease_ttl)
        except Exception as exc:
            logger.warning("could not prune the stream cursors: %s", exc)

    async def aclose(self, within: float = 10.0) -> None:
        """End every connection and wait (at most ``within`` seconds) for their agent sides."""
        for connection_id in list(self._connections):
            self.remove(connection_id)
        if self._reaper is not None:
            self._reaper.cancel()
        tasks = list(self._tasks)
        if tasks:
            _, pending = await asyncio.wait(tasks, timeout=within)
            for task in pending:
                task.cancel()

    async def _run(self, connection: RemoteConnection) -> None:
        try:
            await self._serve(connection)
        except Exception:
            logger.exception("the agent side of remote connection %s failed", connection.id)
        finally:
            self.serving -= 1
            connection.end()
            if self._connections.get(connection.id) is connection:
                del self._connections[connection.id]
                self._disown(connection.principal)

    async def _reap_forever(self) -> None:
        limit = min(self.config.idle_timeout, self.config.grace)
        period = max(0.05, min(1.0, limit / 4))
        while self._connections:
            await asyncio.sleep(period)
            self.reap()

"""Same version on both sides: ``acp2 bridge`` copies the bytes, frame for frame.

:func:`pass_through` copies both directions until one ends. Only whole lines are
forwarded, unchanged (so a frame is never split by the bridge, and what the peer
receives is byte for byte what the other sent); a line longer than the message size
limit is dropped instead (the peer would refuse it anyway) and noted. With a
:class:`~acp2.bridge.wirelog.WireLog` every forwarded frame is logged.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final, Literal

import anyio

from acp2.bridge.wirelog import WireLog
from acp2.errors import ConnectionClosed
from acp2.rpc.framing import DEFAULT_MAX_MESSAGE_SIZE
from acp2.transport.base import DirectReceive, DirectSend, Transport

__all__ = ["Copier", "Side", "pass_through"]

_NEWLINE: Final = b"\n"

#: Which side's stream ended first.
Side = Literal["client", "agent"]


class Copier:
    """The sans-IO part of one direction: ``feed(chunk)`` returns the bytes to forward
    now (whole lines only) and the lines in them; ``dropped`` counts oversized lines."""

    def __init__(self, limit: int = DEFAULT_MAX_MESSAGE_SIZE) -> None:
        self._pending = bytearray()
        self._limit = limit
        self._skipping = False
        self.dropped = 0

    def feed(self, chunk: bytes) -> bytes:
        """The whole lines completed by ``chunk`` (with their newlines), ready to send."""
        if not self._pending and not self._skipping and chunk.endswith(_NEWLINE):
            return chunk  # the usual case: writers write whole lines; nothing is copied
        if self._skipping:
            cut = chunk.find(_NEWLINE)
            if cut < 0:
                return b""
            self._skipping = False
            chunk = chunk[cut + 1 :]
        cut = chunk.rfind(_NEWLINE)
        if cut < 0:
            self._hold(chunk)
            return b""
        if self._pending:
            out = bytes(self._pending) + chunk[: cut + 1]
            self._pending = bytearray()
        else:
            out = chunk[: cut + 1]
        self._hold(chunk[cut + 1 :])
        return out

    def _hold(self, part: bytes) -> None:
        self._pending += part
        if len(self._pending) > self._limit:
            self._pending = bytearray()
            self._skipping = True
            self.dropped += 1


@dataclass
class _Direction:
    source: Transport
    sink: Transport
    name: str  # e.g. "client->agent"
    version: str
    log: WireLog | None

    async def copy(self, head: bytes) -> None:
        """Forward ``head`` and then every chunk of ``source`` until it ends (or the sink
        is gone). Through the transports' direct paths when both have them."""
        copier = Copier()
        if isinstance(self.source, DirectReceive) and isinstance(self.sink, DirectSend):
            await self._copy_direct(copier, head)
            return
        chunk = head
        while True:
            out = self._lines(copier, chunk) if chunk else b""
            if out:
                try:
                    await self.sink.send(out)
                except ConnectionClosed:
                    return
            chunk = await self.source.receive()
            if not chunk:
                return

    async def _copy_direct(self, copier: Copier, head: bytes) -> None:
        """The direct path: chunks are forwarded from the read callback with the sink's
        ``send_nowait`` (no task switch per message); what the sink cannot take at once
        is sent from this task, and reading waits for it (back-pressure)."""
        source: Any = self.source
        sink: Any = self.sink
        backlog = bytearray()
        closed = False

        def consume(chunk: bytes) -> bool:
            nonlocal closed
            out = self._lines(copier, chunk)
            if not out:
                return True
            try:
                taken: int = sink.send_nowait(out)
            except ConnectionClosed:
                closed = True
                return False
            backlog.extend(out[taken:])
            return taken == len(out)

        if head:
            consume(head)
        while not closed:
            if backlog:  # consume stopped the pump for it
                try:
                    await sink.send(bytes(backlog))
                except ConnectionClosed:
                    return
                backlog.clear()
            if not await source.pump(consume):
                return

    def _lines(self, copier: Copier, chunk: bytes) -> bytes:
        dropped = copier.dropped
        out = copier.feed(chunk)
        if self.log is not None:
            if copier.dropped != dropped:
                self.log.note(f"{self.name}: dropped a frame over the size limit")
            if out:
                self.log.frames(self.name, self.version, out.split(_NEWLINE)[:-1])
        return out


async def pass_through(
    client: Transport,
    agent: Transport,
    *,
    client_head: bytes,
    agent_head: bytes,
    version: str,
    log: WireLog | None = None,
) -> Side:
    """Copy ``client`` to ``agent`` and back until one side's stream ends; return which.

    ``client_head`` / ``agent_head`` are bytes already read from each side that the
    other has not seen yet (they are forwarded first). ``version`` labels the log."""
    ended: list[Side] = []

    async def run(direction: _Direction, head: bytes, side: Side) -> None:
        await direction.copy(head)
        ended.append(side)
        tg.cancel_scope.cancel()

    upstream = _Direction(client, agent, "client->agent", version, log)
    downstream = _Direction(agent, client, "agent->client", version, log)
    async with anyio.create_task_group() as tg:
        tg.start_soon(run, downstream, agent_head, "agent")
        tg.start_soon(run, upstream, client_head, "client")
    return ended[0] if ended else "client"

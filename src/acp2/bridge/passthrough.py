"""Same version on both sides: ``acp2 bridge`` copies the bytes, frame for frame.

:func:`pass_through` copies both directions until one ends. Only whole lines are
forwarded, unchanged (so a frame is never split by the bridge, and what the peer
receives is byte for byte what the other sent); a line longer than the message size
limit is dropped instead (the peer would refuse it anyway), and answered as the rpc
reader answers one, so that nobody waits for it forever: an oversized request gets
``-32600`` from the bridge with its id (when its first or last bytes show one), an
oversized response becomes a ``-32600`` error response to the request it answers, and
an oversized notification is only logged. With a :class:`~acp2.bridge.wirelog.WireLog`
every forwarded frame is logged.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final, Literal

import anyio

from acp2.bridge.gate import Gate
from acp2.bridge.wirelog import WireLog
from acp2.errors import ConnectionClosed, InvalidRequest
from acp2.rpc.framing import DEFAULT_MAX_MESSAGE_SIZE, HEAD_SIZE, TAIL_SIZE, Oversized
from acp2.rpc.messages import encode_error
from acp2.rpc.sniff import classify_oversized
from acp2.transport.base import DirectReceive, DirectSend, Transport

__all__ = ["Copier", "Side", "pass_through"]

_NEWLINE: Final = b"\n"
#: How long the client's last frames may take to reach the agent once the client is
#: gone (:func:`pass_through`).
DRAIN_GRACE: Final = 2.0
logger = logging.getLogger(__name__)

#: Which side's stream ended first.
Side = Literal["client", "agent"]


class Copier:
    """The sans-IO part of one direction: ``feed(chunk)`` returns the bytes to forward
    now (whole lines only) and the lines in them; ``dropped`` counts oversized lines, and
    ``oversized`` holds each one's size, head and tail once its end has been read (the
    caller empties it)."""

    def __init__(self, limit: int = DEFAULT_MAX_MESSAGE_SIZE) -> None:
        self._pending = bytearray()
        self.limit = limit
        self._skipping = False
        self.dropped = 0
        self.oversized: list[Oversized] = []
        self._size = 0
        self._head = b""
        self._tail = b""

    def feed(self, chunk: bytes) -> bytes:
        """The whole lines completed by ``chunk`` (with their newlines), ready to send."""
        if not self._pending and not self._skipping and chunk.endswith(_NEWLINE):
            return chunk  # the usual case: writers write whole lines; nothing is copied
        if self._skipping:
            cut = chunk.find(_NEWLINE)
            self._skipped(chunk if cut < 0 else chunk[:cut])
            if cut < 0:
                return b""
            self._skipping = False
            self.oversized.append(Oversized(self._size, self._head, self._tail))
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
        if len(self._pending) > self.limit:
            # Only the first and last bytes are kept: they tell what the line was.
            self._size, self._head, self._tail = 0, bytes(self._pending[:HEAD_SIZE]), b""
            self._skipped(self._pending)
            self._pending = bytearray()
            self._skipping = True
            self.dropped += 1

    def _skipped(self, part: bytes | bytearray) -> None:
        self._size += len(part)
        self._tail = (self._tail + bytes(part[-TAIL_SIZE:]))[-TAIL_SIZE:]


@dataclass
class _Direction:
    source: Transport
    sink: Transport
    name: str  # e.g. "client->agent"
    version: str
    log: WireLog | None
    #: The sink's gate, and the source's (the bridge answers an oversized request there).
    gate: Gate = field(default_factory=Gate)
    source_gate: Gate = field(default_factory=Gate)
    #: Starts a task (the pass-through's task group); None: nothing is answered.
    spawn: Callable[..., Any] | None = None
    #: This direction holds the gate: a line of its own is half written.
    _partial: bool = False
    #: The copy ended because the sink was gone (not because the source ended).
    sink_closed: bool = False

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
                await self.gate.take()
                try:
                    await self.sink.send(out)
                except ConnectionClosed:
                    self.sink_closed = True
                    return
                finally:
                    self.gate.give()
            chunk = await self.source.receive()
            if not chunk:
                return

    async def _copy_direct(self, copier: Copier, head: bytes) -> None:
        """The direct path: chunks are forwarded from the read callback with the sink's
        ``send_nowait`` (no task switch per message); what the sink cannot take at once
        is sent from this task, and reading waits for it (back-pressure)."""
        source: Any = self.source
        backlog = bytearray()
        closed = False

        def consume(chunk: bytes) -> bool:
            nonlocal closed
            out = self._lines(copier, chunk)
            if not out:
                return True
            try:
                return self._forward_now(out, backlog)
            except ConnectionClosed:
                closed = True
                return False

        if head:
            consume(head)
        while not closed:
            if backlog and not await self._flush(backlog):
                self.sink_closed = True
                return
            if not await source.pump(consume):
                break
        self.sink_closed = closed

    def _forward_now(self, out: bytes, backlog: bytearray) -> bool:
        """Write ``out`` now as far as the sink takes it; the rest goes to ``backlog``
        (False). The gate stays taken while a line is half written, and nothing is
        written while the bridge is answering the sink itself."""
        gate, sink = self.gate, self.sink
        if not gate.try_take():
            backlog.extend(out)
            return False
        try:
            taken: int = sink.send_nowait(out)  # type: ignore[attr-defined]
        except ConnectionClosed:
            gate.give()
            raise
        if taken == len(out):
            gate.give()
            return True
        backlog.extend(out[taken:])
        self._partial = True
        return False

    async def _flush(self, backlog: bytearray) -> bool:
        """Send what :meth:`_forward_now` could not; False when the sink is closed."""
        if not self._partial:
            await self.gate.take()
        try:
            await self.sink.send(bytes(backlog))
        except ConnectionClosed:
            return False
        finally:
            self._partial = False
            self.gate.give()
        backlog.clear()
        return True

    def _lines(self, copier: Copier, chunk: bytes) -> bytes:
        dropped = copier.dropped
        out = copier.feed(chunk)
        if copier.oversized:
            out += self._refuse(copier)
        if self.log is not None:
            if copier.dropped != dropped:
                self.log.note(f"{self.name}: dropped a frame over the size limit")
            if out:
                self.log.frames(self.name, self.version, out.split(_NEWLINE)[:-1])
        return out

    def _refuse(self, copier: Copier) -> bytes:
        """Answer the oversized lines ``copier`` dropped as the rpc reader would: a
        request to its sender, a response to the side waiting for it (returned, to be
        sent on with the lines copied now); a notification is only logged."""
        to_sink = b""
        for event in copier.oversized:
            refusal = classify_oversized(event, copier.limit)
            logger.warning("%s: dropped a message: %s", self.name, refusal.message)
            if refusal.response_to is not None:
                error = InvalidRequest(refusal.message)
                to_sink += encode_error(refusal.response_to, error) + _NEWLINE
            elif refusal.reply and self.spawn is not None:
                line = encode_error(refusal.reply_id, InvalidRequest(refusal.message)) + _NEWLINE
                self.spawn(self.source_gate.send, self.source, line)
        copier.oversized.clear()
        return to_sink


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
    other has not seen yet (they are forwarded first). ``version`` labels the log. A
    line over the message size limit is not copied; the bridge answers it (see the
    module)."""
    ended: list[Side] = []

    async def run(direction: _Direction, head: bytes, side: Side) -> None:
        await direction.copy(head)
        ended.append(side)
        if direction is downstream and downstream.sink_closed:
            # The client left while the agent spoke: what it sent before it left (a last
            # answer POSTed just before a DELETE) is still forwarded, then the agent sees
            # the end of its input -- nothing the client sent is lost. Bounded, for a
            # client end that stays open.
            with anyio.move_on_after(DRAIN_GRACE):
                await upstream_done.wait()
        tg.cancel_scope.cancel()

    async def run_upstream() -> None:
        try:
            await run(upstream, client_head, "client")
        finally:
            upstream_done.set()

    upstream_done = anyio.Event()
    to_client, to_agent = Gate(), Gate()
    upstream = _Direction(client, agent, "client->agent", version, log, to_agent, to_client)
    downstream = _Direction(agent, client, "agent->client", version, log, to_client, to_agent)
    async with anyio.create_task_group() as tg:
        upstream.spawn = downstream.spawn = tg.start_soon
        tg.start_soon(run, downstream, agent_head, "agent")
        tg.start_soon(run_upstream)
    return ended[0] if ended else "client"

"""The frame sink for a session that several clients watch: :class:`Fanout`.

A session's :class:`~acp2.agent.emitter.Emitter` writes to one sink. While one client holds
the session that sink is its connection itself (nothing in between on the hot path); once
a second client attaches, :mod:`acp2.agent.attach` points the emitter at a :class:`Fanout`
of every attached client's sink, and back again when they leave (at
:data:`~acp2.agent.emitter.GONE` after the last). Each update is encoded and recorded
once; only the finished frame is handed to every client.
"""

from __future__ import annotations

from collections.abc import Sequence

from acp2.agent.emitter import FrameSink
from acp2.errors import ConnectionClosed

__all__ = ["Fanout"]


class Fanout:
    """A :class:`FrameSink` that hands every frame to each of ``sinks``, in order.

    A sink whose connection is closed is skipped (its client is being detached); when
    all of them are, the emitter is told as a single client's would be. The
    producer is slowed to the slowest reader: ``congested`` while any sink is, and
    :meth:`drain` waits for each congested one -- a client that stops reading is dropped
    by its own connection's stall timeout, so it cannot hold the others back for longer.
    """

    __slots__ = ("sinks",)

    def __init__(self, sinks: Sequence[FrameSink]) -> None:
        self.sinks = tuple(sinks)

    def send_frame_nowait(self, frame: bytes) -> None:
        """Queue ``frame`` on every sink. Raises ``ConnectionClosed`` when every sink's
        connection is closed (nobody is left to watch: the work is cancelled)."""
        closed = 0
        for sink in self.sinks:
            try:  # once per client per update: a bare try is cheapest
                sink.send_frame_nowait(frame)
            except ConnectionClosed:
                closed += 1
        if closed == len(self.sinks):
            raise ConnectionClosed("every client of the session is gone")

    @property
    def congested(self) -> bool:
        """True while any sink asks its producer to wait."""
        return any(sink.congested for sink in self.sinks)

    async def drain(self) -> None:
        """Wait for every congested sink (a closed one counts as drained)."""
        for sink in self.sinks:
            if sink.congested:
                try:  # noqa: SIM105 - a closed client must not end the session's work
                    await sink.drain()
                except ConnectionClosed:
                    pass

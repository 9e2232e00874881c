"""The frame sink for a session that several clients watch: :class:`Fanout`.

A session's :class:`~acp2.agent.emitter.Emitter` writes to one sink. While one client holds
the session that sink is its connection itself (nothing in between on the hot path); once
a second client attaches, :mod:`acp2.agent.session_hub` points the emitter at a :class:`Fanout`
of every attached client's sink, and back again when they leave (at
:data:`~acp2.agent.emitter.GONE` after the last). Each update is encoded and recorded
once; only the finished frame is handed to every client.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from acp2.agent.emitter import FrameSink
from acp2.errors import ConnectionClosed

__all__ = ["Fanout", "Listeners"]


class Listeners(Protocol):
    """What a :class:`Fanout` asks its session's hub
    (:class:`~acp2.agent.session_hub.SessionHub`)."""

    def lead(self) -> FrameSink | None:
        """The sink whose backpressure the producer honours (the client driving the work)."""

    def overflowed(self, sink: FrameSink) -> None:
        """``sink``'s client fell too far behind: drop it."""


class Fanout:
    """A :class:`FrameSink` that hands every frame to each of ``sinks``, in order.

    A sink whose connection is closed is skipped (its client is being detached); when
    all of them are, the emitter is told as a single client's would be. The producer
    waits only for the *lead* sink (``listeners.lead()``: the client driving the work):
    every other sink is a listener with a bounded buffer, its connection's high-water
    mark of unwritten output. A listener that goes past it (it stopped reading) is handed
    to ``listeners.overflowed`` to be dropped instead of waited for, so one slow client
    never slows the others.
    """

    __slots__ = ("listeners", "sinks")

    def __init__(self, sinks: Sequence[FrameSink], listeners: Listeners | None = None) -> None:
        self.sinks = tuple(sinks)
        self.listeners = listeners

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
        """Wait for the lead sink when congested; let each congested listener write what
        it can without waiting, and drop one that is past its bound (a closed sink
        counts as drained)."""
        listeners = self.listeners
        lead = listeners.lead() if listeners is not None else None
        for sink in self.sinks:
            if not sink.congested:
                continue
            if listeners is not None and sink is not lead and _lagging(sink):
                listeners.overflowed(sink)
                continue
            try:  # noqa: SIM105 - a closed client must not end the session's work
                await sink.drain()
            except ConnectionClosed:
                pass


def _lagging(sink: FrameSink) -> bool:
    """True while ``sink`` holds more unwritten output than its high-water mark (a
    connection's ``lagging``); a sink that cannot tell is never dropped."""
    return bool(getattr(sink, "lagging", False))

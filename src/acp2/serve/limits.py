"""The socket-level limits of ``acp2 serve``, which only the ASGI server can hold.

An ASGI application sees a request once its head has arrived: a socket that sends
nothing, or trickles its head a byte at a time, never reaches it, yet holds a file
descriptor. :func:`uvicorn_options` turns a :class:`~acp2.serve.config.ServeConfig` into
uvicorn settings that bound those sockets: how many it keeps (``limit_concurrency``:
503 past it), how big a head may be (``h11_max_incomplete_event_size``), how long an
idle keep-alive socket stays (``timeout_keep_alive``), the WebSocket pings, and an h11
protocol that closes a socket whose request head is not complete within
``header_timeout`` of its opening (or of the keep-alive after its last response):
uvicorn has no such timer.
Under another server (hypercorn) set its own equivalents (docs/remote.md, "Limits").
"""

from __future__ import annotations

import asyncio
from typing import Any

from acp2.serve.config import ServeConfig

__all__ = ["raise_fd_limit", "uvicorn_options"]

#: WebSocket pings (seconds): a peer that stops answering is dropped within their sum.
WS_PING_INTERVAL = 15.0
WS_PING_TIMEOUT = 20.0


def uvicorn_options(config: ServeConfig) -> dict[str, Any]:
    """Keyword arguments for ``uvicorn.Config`` holding ``config``'s socket limits
    (needs the ``server`` extra). The caller adds the app, host, port and the rest."""
    return {
        "http": guarded_h11(config.header_timeout, config.keep_alive),
        "limit_concurrency": config.max_sockets,
        "timeout_keep_alive": config.keep_alive,
        "h11_max_incomplete_event_size": config.max_header_size,
        "ws_max_size": config.max_message_size + 1024,
        "ws_ping_interval": WS_PING_INTERVAL,
        "ws_ping_timeout": WS_PING_TIMEOUT,
    }


def guarded_h11(header_timeout: float, keep_alive: float = 0.0) -> type[asyncio.Protocol]:
    """uvicorn's h11 protocol, closing a socket whose request head is not complete
    within ``header_timeout`` seconds of its opening, or of the end of the ``keep_alive``
    seconds it may stay idle after a response (uvicorn's own keep-alive timer stops at a
    request's first byte, so alone it lets a head trickle in forever)."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class GuardedH11(H11Protocol):
        """H11Protocol with a request-head deadline (see :func:`guarded_h11`)."""

        _deadline: asyncio.TimerHandle | None = None
        _upgraded = False

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            """Start serving the socket; its first head is due within the timeout."""
            super().connection_made(transport)
            self._arm(header_timeout)

        def on_response_complete(self) -> None:
            """A response ended: the next head is due after the keep-alive and the timeout."""
            # Armed before the parent handles a pipelined request (a new cycle is in time).
            self._arm(keep_alive + header_timeout)
            super().on_response_complete()

        def handle_websocket_upgrade(self, event: Any) -> None:
            """The socket becomes a WebSocket (pinged from now on): no head is due."""
            self._upgraded = True
            self._disarm()
            super().handle_websocket_upgrade(event)

        def connection_lost(self, exc: Exception | None) -> None:
            """The socket closed: forget the deadline."""
            self._disarm()
            super().connection_lost(exc)

        def _arm(self, within: float) -> None:
            self._disarm()
            self._deadline = self.loop.call_later(within, self._due, self.cycle)

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _due(self, cycle: object) -> None:
            # A new cycle means a whole head arrived after the timer started: in time.
            if self.cycle is cycle and not self._upgraded and not self.transport.is_closing():
                self.transport.close()

    return GuardedH11


def raise_fd_limit(wanted: int) -> int:
    """Raise this process's soft open-file limit towards ``wanted`` (never past the hard
    limit) so the socket cap, not the descriptor limit, is what turns clients away;
    return the soft limit now in force."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if target > soft:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):
            pass  # left as it was: the server still works, with fewer sockets
    return soft

"""An acp2 serve application under a real uvicorn in this event loop, on 127.0.0.1.

:func:`serve` runs any ASGI app (an :class:`acp2.serve.AcpApp`, from
:func:`acp2.serve.create_app`) on a free loopback port and yields :class:`Served` (its
URL, app and port); leaving it stops the server. The serve tests speak to it with raw
clients, the e2e suite with acp2's remote client.
"""

from __future__ import annotations

import contextlib
import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import anyio
import uvicorn

from acp2.serve import AcpApp
from helpers.timeouts import TIMEOUT

__all__ = ["Served", "serve"]


class _Server(uvicorn.Server):
    """uvicorn's server, with an event set once it listens."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.ready = anyio.Event()

    async def startup(self, sockets: Any = None) -> None:
        await super().startup(sockets)
        self.ready.set()


@dataclass
class Served:
    """A running server: its base URL (``http://127.0.0.1:<port>/acp``) and its app."""

    url: str
    app: AcpApp
    port: int
    server: uvicorn.Server = field(repr=False)

    @property
    def ws_url(self) -> str:
        """The same endpoint as a ``ws://`` URL."""
        return "ws" + self.url[4:]


@contextlib.asynccontextmanager
async def serve(app: Any, **options: Any) -> AsyncIterator[Served]:
    """Run ``app`` under uvicorn in this event loop on a free loopback port."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(
        app, log_level="warning", lifespan="on", ws_ping_interval=15.0, **options
    )
    server = _Server(config)
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.serve, [sock])
        with anyio.fail_after(TIMEOUT):
            await server.ready.wait()
        try:
            path = app.config.path if isinstance(app, AcpApp) else "/acp"
            yield Served(f"http://127.0.0.1:{port}{path}", app, port, server)
        finally:
            server.should_exit = True
    sock.close()

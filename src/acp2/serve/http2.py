"""``acp2 serve --http2``: the same ASGI application under hypercorn, which speaks HTTP/2.

The Streamable HTTP RFD wants HTTP/2: every open SSE stream of a client then shares one
TCP connection instead of holding one each. uvicorn speaks HTTP/1.1 only, so with
``--http2`` the app runs under hypercorn (the ``http2`` extra: ``hypercorn`` and ``h2``).
Over TLS (``--ssl-certfile``/``--ssl-keyfile``) clients choose HTTP/2 by ALPN; over
cleartext hypercorn takes HTTP/2 with prior knowledge (``h2c``, what ``httpx`` sends with
``http1=False, http2=True``), and HTTP/1.1 otherwise. WebSocket works on both. The
sockets are bound before (by :func:`acp2.cli.serve_startup.bind_listeners`) and handed
over by descriptor, so bind errors read as they do with uvicorn.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable, Sequence
from typing import Any

from acp2.serve.config import ServeConfig

__all__ = ["hypercorn_config", "missing", "run_hypercorn"]


def missing() -> str | None:
    """What to install for ``--http2`` when hypercorn or h2 is absent (None: both are)."""
    from importlib.util import find_spec

    if find_spec("hypercorn") is None or find_spec("h2") is None:
        return "acp2 serve --http2 needs hypercorn and h2: pip install -e '.[http2]'"
    return None


def hypercorn_config(
    listeners: Sequence[socket.socket],
    config: ServeConfig,
    *,
    certfile: str | None = None,
    keyfile: str | None = None,
) -> Any:
    """A hypercorn ``Config`` serving on ``listeners`` (taken over: the caller must not
    close them) with ``config``'s keep-alive, header and message limits."""
    from hypercorn.config import Config

    hyper = Config()
    for sock in listeners:  # listening before the URL is announced: no early refusal
        sock.listen(hyper.backlog)
    hyper.bind = [f"fd://{sock.detach()}" for sock in listeners]
    hyper.keep_alive_timeout = config.keep_alive
    hyper.h11_max_incomplete_size = config.max_header_size
    hyper.websocket_max_message_size = config.max_message_size + 1024
    hyper.graceful_timeout = 5.0
    hyper.accesslog = None
    hyper.errorlog = None  # the app logs what matters; hypercorn's lines carry peer text
    hyper.loglevel = "WARNING"
    if certfile:
        hyper.certfile, hyper.keyfile = certfile, keyfile
    return hyper


def run_hypercorn(app: Any, hyper: Any, announce: Callable[[], None]) -> None:
    """Serve ``app`` with ``hyper`` until SIGINT / SIGTERM; ``announce`` runs once the
    sockets are handed over (they already listen, so no connection is lost)."""
    from hypercorn.asyncio import serve

    async def main() -> None:
        announce()
        await serve(app, hyper, mode="asgi")

    asyncio.run(main())

"""One WebSocket link, on the ``websockets`` asyncio client: the only module that talks to
that library, so :mod:`acp2.transport.ws_client` deals in acp2's errors and bytes only.

A link is one socket; a durable transport lives across several of them.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Mapping
from typing import Any

from acp2.errors import ConnectionClosed
from acp2.sanitize import line as sanitize_line
from acp2.transport.remote_base import RemoteRefused, needs

__all__ = ["Link", "dial"]


class Link:
    """An open WebSocket: its 101's headers, its text frames in, text frames out."""

    __slots__ = ("_text_kw", "_ws")

    def __init__(self, ws: Any) -> None:
        self._ws = ws
        # websockets >= 14 sends bytes as a text frame without decoding them first.
        self._text_kw = "text" in inspect.signature(ws.send).parameters

    def header(self, name: str) -> str | None:
        """A header of the upgrade's answer (case-insensitive), or ``None``."""
        value = self._ws.response.headers.get(name)
        return value if isinstance(value, str) else None

    def cookies(self) -> dict[str, str]:
        """The cookies the upgrade's answer set (``Set-Cookie``), name to value; their
        attributes (path, expiry, ...) are dropped: they are kept for one connection."""
        found: dict[str, str] = {}
        for value in self._ws.response.headers.get_all("set-cookie"):
            name, sep, rest = str(value).partition("=")
            if sep and name.strip():
                found[name.strip()] = rest.split(";", 1)[0].strip()
        return found

    async def frames(self) -> AsyncIterator[bytes]:
        """Each text frame, as UTF-8 bytes, until the link closes (binary frames are
        skipped, as the RFD says)."""
        closed = needs("websockets.exceptions").ConnectionClosed
        try:
            async for message in self._ws:
                if isinstance(message, str):
                    yield message.encode()
        except closed:
            return

    async def send(self, message: bytes) -> None:
        """Send ``message`` as one text frame; raises ``ConnectionClosed`` once closed."""
        closed = needs("websockets.exceptions").ConnectionClosed
        try:
            if self._text_kw:
                await self._ws.send(message, text=True)
            else:  # pragma: no cover - websockets 13
                await self._ws.send(message.decode())
        except closed as exc:
            raise ConnectionClosed("the WebSocket link closed") from exc

    def close_code(self) -> int | None:
        """The close code the server sent (``None`` when the link just broke)."""
        code = self._ws.close_code
        return code if isinstance(code, int) else None

    async def close(self, code: int) -> None:
        """Close the link with ``code`` (waits briefly for the closing handshake)."""
        await self._ws.close(code)

    def abort(self) -> None:
        """Drop the TCP connection at once (tests use it to break a link)."""
        self._ws.transport.abort()


async def dial(url: str, headers: Mapping[str, str], options: Mapping[str, Any]) -> Link:
    """Upgrade ``GET url`` with ``headers``; raise :class:`RemoteRefused` when no link
    results (``status``: the refusal's HTTP status, 426 for an answer that is no upgrade,
    0 when the server was not reached)."""
    client = needs("websockets.asyncio.client")
    errors = needs("websockets.exceptions")
    extra = dict(options)
    if "proxy" in inspect.signature(client.connect.__init__).parameters:
        extra["proxy"] = None  # a direct link: an ACP server is not reached through $http_proxy
    try:
        ws = await client.connect(url, additional_headers=dict(headers), **extra)
    except errors.InvalidStatus as exc:
        status = exc.response.status_code
        body = sanitize_line(bytes(exc.response.body or b"")[:200].decode(errors="replace"))
        raise RemoteRefused(
            f"{url} refused the WebSocket upgrade: {status} {body}", status
        ) from None
    except errors.InvalidHandshake as exc:
        raise RemoteRefused(f"{url} did not answer as a WebSocket: {exc}", 426) from None
    except (OSError, TimeoutError) as exc:
        raise RemoteRefused(f"cannot reach {url}: {exc}") from None
    return Link(ws)

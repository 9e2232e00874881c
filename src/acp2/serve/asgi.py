"""Small ASGI 3 helpers shared by the HTTP and WebSocket handlers (no framework)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from typing import Any

from acp2.errors import BodyTooLarge, ClientDisconnected

__all__ = ["Receive", "Scope", "Send", "read_body", "respond"]

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


async def read_body(receive: Receive, limit: int) -> bytes:
    """The whole request body; raises :class:`BodyTooLarge` past ``limit`` bytes (without
    keeping more than that) and :class:`ClientDisconnected` if the client left."""
    parts: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ClientDisconnected
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge
        parts.append(chunk)
        if not message.get("more_body", False):
            return b"".join(parts)


async def respond(
    send: Send,
    status: int,
    body: bytes | str = b"",
    *,
    content_type: str = "text/plain; charset=utf-8",
    headers: Sequence[tuple[str, str]] = (),
) -> None:
    """Send a whole response: ``status``, ``headers``, and ``body`` (text or bytes)."""
    data = body.encode() if isinstance(body, str) else body
    raw = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers]
    if data:
        raw.append((b"content-type", content_type.encode()))
    raw.append((b"content-length", str(len(data)).encode()))
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": data})

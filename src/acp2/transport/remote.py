"""Open a remote ACP endpoint: WebSocket first, Streamable HTTP when the upgrade is refused.

:func:`open_remote` is what :func:`acp2.client.connect_url` runs underneath; it yields a
:class:`~acp2.transport.base.Transport` (:class:`~acp2.transport.ws_client.WebSocketTransport`
or :class:`~acp2.transport.http_client.HttpTransport`). Both take ``ws(s)://`` and
``http(s)://`` URLs alike: the scheme is switched to the one each profile speaks.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Literal, TypeAlias
from urllib.parse import urlsplit, urlunsplit

from acp2.transport.backoff import Backoff
from acp2.transport.base import Transport
from acp2.transport.remote_base import RemoteRefused

__all__ = ["Profile", "http_url", "open_remote", "ws_url"]

Profile: TypeAlias = Literal["auto", "websocket", "http"]

#: Upgrade refusals after which "auto" tries Streamable HTTP (anything else -- 401, 403,
#: a server that cannot be reached (0) -- would fail the same way over HTTP). 426 is also
#: what an answer that is no upgrade at all counts as.
_NO_WEBSOCKET = frozenset({400, 404, 405, 426, 501})
_SCHEMES = {"ws": "http", "wss": "https", "http": "http", "https": "https"}


def http_url(url: str) -> str:
    """``url`` with an ``http``/``https`` scheme (``ws`` → ``http``, ``wss`` → ``https``);
    raises ``ValueError`` for any other scheme."""
    parts = urlsplit(url)
    scheme = _SCHEMES.get(parts.scheme.lower())
    if scheme is None or not parts.netloc:
        raise ValueError(f"not an http(s):// or ws(s):// URL: {url!r}")
    return urlunsplit(parts._replace(scheme=scheme))


def ws_url(url: str) -> str:
    """``url`` with a ``ws``/``wss`` scheme; raises ``ValueError`` like :func:`http_url`."""
    plain = urlsplit(http_url(url))
    return urlunsplit(plain._replace(scheme="wss" if plain.scheme == "https" else "ws"))


def auth_headers(token: str | None, headers: Mapping[str, str] | None) -> dict[str, str]:
    """``headers`` plus ``Authorization: Bearer <token>`` when a token is given."""
    found = dict(headers or {})
    if token is not None:
        found["Authorization"] = f"Bearer {token}"
    return found


@asynccontextmanager
async def open_remote(
    url: str,
    *,
    token: str | None = None,
    profile: Profile = "auto",
    durable: bool = True,
    backoff: Backoff | None = None,
    headers: Mapping[str, str] | None = None,
) -> AsyncIterator[Transport]:
    """Yield a transport to the ACP endpoint ``url``; close it on exit.

    ``profile`` "websocket" or "http" forces one; "auto" upgrades to a WebSocket and
    falls back to Streamable HTTP when the server refuses the upgrade (or does not speak
    WebSocket). ``token`` is sent as a bearer token; ``durable`` asks for a durable link
    (plain mode when the server does not grant it); ``backoff`` paces reconnects.
    Raises :class:`RemoteRefused` when the server refuses or cannot be reached,
    ``ValueError`` for a URL that is neither http(s) nor ws(s), ``ImportError`` without
    the ``remote`` extra.
    """
    sent = auth_headers(token, headers)
    async with AsyncExitStack() as stack:
        transport: Transport | None = None
        if profile in ("auto", "websocket"):
            from acp2.transport.ws_client import open_websocket

            opening = open_websocket(ws_url(url), headers=sent, durable=durable, backoff=backoff)
            try:
                transport = await stack.enter_async_context(opening)
            except RemoteRefused as exc:
                if profile == "websocket" or exc.status not in _NO_WEBSOCKET:
                    raise
        if transport is None:
            from acp2.transport.http_client import open_http

            opening_http = open_http(http_url(url), headers=sent, durable=durable, backoff=backoff)
            transport = await stack.enter_async_context(opening_http)
        yield transport

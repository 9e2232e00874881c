"""Who may use the endpoint: the ``Host`` and ``Origin`` allow-lists and bearer tokens.

* ``Host``, when a request carries one, must name the server: a loopback name
  (``127.0.0.1``, ``localhost``, ``[::1]``), the address the request came in on, or a
  name listed in ``allowed_hosts``; else 421. A DNS-rebinding page reaches the server
  under its own domain name, which its browser sends as ``Host``: this refuses it even
  when the browser sends no ``Origin``.

* ``Origin``, when a request carries one (browsers always do), must be the server's own
  loopback origin (``http(s)://127.0.0.1:<port>``, ``localhost``, ``[::1]``) or listed in
  ``allow_origins``: else 403. This is the DNS-rebinding protection: a web page on
  another origin cannot drive a local agent through the victim's browser.
* With tokens configured, ``Authorization: Bearer <token>`` must name one of them (401
  otherwise); the token's principal is the identity of the connection it opens, and every
  later request on that connection must come from the same principal (a connection id
  is not a credential).
"""

from __future__ import annotations

import hmac
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from acp2.serve.config import LOCAL_PRINCIPAL, ServeConfig

__all__ = ["Headers", "Refusal", "admit"]

_LOOPBACK = ("127.0.0.1", "localhost", "[::1]")
_TOKEN_REQUIRED = (
    "A valid bearer token is required (the server's token: acp2 chat/run --token, or $ACP2_TOKEN)"
)
_MISDIRECTED = (421, "Misdirected Request: this server does not serve that Host")


class Headers:
    """The request headers of an ASGI scope, by lower-case name (last value wins)."""

    def __init__(self, raw: Iterable[tuple[bytes, bytes]]) -> None:
        self._values: dict[str, str] = {}
        for name, value in raw:
            self._values[name.decode("latin-1").lower()] = value.decode("latin-1")

    @classmethod
    def of(cls, scope: Mapping[str, Any]) -> Headers:
        """The headers of ``scope``."""
        return cls(scope.get("headers") or ())

    def get(self, name: str) -> str | None:
        """The value of ``name`` (any case), or None."""
        return self._values.get(name.lower())


@dataclass(frozen=True)
class Refusal:
    """A request turned away: its HTTP status (and WebSocket close code) and why."""

    status: int
    reason: str

    @property
    def close_code(self) -> int:
        """The WebSocket close code for the same refusal (4000 + status)."""
        return 4000 + self.status


def admit(scope: Mapping[str, Any], headers: Headers, config: ServeConfig) -> str | Refusal:
    """The principal of this request, or why it is refused (421 host, 403 origin, 401
    token)."""
    host = headers.get("host")
    if host is not None and not _host_allowed(host, scope, config):
        return Refusal(*_MISDIRECTED)
    origin = headers.get("origin")
    if origin is not None and not _origin_allowed(origin, scope, config):
        return Refusal(403, "Origin not allowed")
    if not config.tokens:
        return LOCAL_PRINCIPAL
    principal = _principal(headers.get("authorization"), config.tokens)
    if principal is None:
        # Says how to send it: since tokens are the default, a user's first sight of
        # this is a chat started without one.
        return Refusal(401, _TOKEN_REQUIRED)
    return principal


def _host_allowed(host: str, scope: Mapping[str, Any], config: ServeConfig) -> bool:
    name = _host_name(host)
    if name in _LOOPBACK or "*" in config.allowed_hosts:
        return True
    if any(name == allowed.lower() for allowed in config.allowed_hosts):
        return True
    server = scope.get("server")  # (the local address, port) the request came in on
    if not server:
        return False
    return name.strip("[]") == str(server[0]).lower()


def _host_name(host: str) -> str:
    """``host`` without its port, lower-case (an IPv6 literal keeps its brackets)."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[: host.find("]") + 1] or host
    name, colon, _ = host.rpartition(":")
    return name if colon and ":" not in name else host


def _origin_allowed(origin: str, scope: Mapping[str, Any], config: ServeConfig) -> bool:
    origin = origin.rstrip("/")
    if origin in config.allow_origins or "*" in config.allow_origins:
        return True
    server = scope.get("server")
    if not server or len(server) < 2 or server[1] is None:
        return False
    port = server[1]
    return any(
        origin == f"{scheme}://{host}:{port}" for scheme in ("http", "https") for host in _LOOPBACK
    )


def _principal(authorization: str | None, tokens: Mapping[str, str]) -> str | None:
    if authorization is None:
        return None
    scheme, _, token = authorization.strip().partition(" ")
    if scheme.lower() != "bearer" or not token:
        return None
    given = token.strip().encode()
    found = None
    for known, principal in tokens.items():
        # Compare against every token (no early exit) so timing says nothing.
        if hmac.compare_digest(known.encode(), given):
            found = principal
    return found

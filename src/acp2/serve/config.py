"""What an ``acp2 serve`` application is configured with (:class:`ServeConfig`).

Every bound here has a default that is safe on one machine; ``acp2 serve`` sets the
token, the allowed origins and the path from its flags. The limits are per connection
unless said otherwise (docs/remote.md, "Limits").
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field

from acp2.rpc.framing import DEFAULT_MAX_MESSAGE_SIZE
from acp2.transport.durable import Retention

__all__ = ["LOCAL_PRINCIPAL", "ServeConfig", "new_token"]

#: The principal of every connection when no token is configured (loopback use), and of
#: the one token of ``acp2 serve``: the agent runtime serves it as the local user (None).
LOCAL_PRINCIPAL = "local"


def new_token() -> str:
    """A fresh random bearer token (32 bytes of entropy, URL-safe text)."""
    return secrets.token_urlsafe(32)


@dataclass(frozen=True)
class ServeConfig:
    """The settings of one ASGI application serving ACP on ``path``.

    ``tokens`` maps each accepted bearer token to its principal (the identity handed to
    the agent side of every connection it opens); empty means no ``Authorization`` is
    required and every connection's principal is :data:`LOCAL_PRINCIPAL`.
    ``allow_origins`` lists the ``Origin`` values accepted besides the server's own
    loopback origins. ``allowed_hosts`` lists the ``Host`` names (without port; ``*``
    for any) accepted besides the loopback names and the address the request came in
    on. ``durable=False`` never grants the durable extension.
    """

    path: str = "/acp"
    tokens: Mapping[str, str] = field(default_factory=dict)
    allow_origins: tuple[str, ...] = ()
    allowed_hosts: tuple[str, ...] = ()
    #: Largest JSON-RPC message accepted from a client (413 / close 1009 over it).
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE
    #: Bytes a connection may hold for its client before the agent's sends wait
    #: (unacknowledged on a durable WebSocket, else not yet written to a socket).
    max_held_bytes: int = 16 * 1024 * 1024
    #: A send that waited this long for room ends the connection (a client that
    #: stopped reading does not pin an agent forever).
    stall_timeout: float = 60.0
    #: A connection with no stream open and no request for this long is ended.
    idle_timeout: float = 300.0
    #: How long a durable connection whose link dropped waits for a resume (None: the
    #: retention's seconds).
    resume_grace: float | None = None
    retention: Retention = field(default_factory=Retention)
    durable: bool = True
    #: Seconds between SSE keepalive comments.
    keepalive: float = 15.0
    #: Seconds an ``initialize`` POST waits for the agent's answer.
    initialize_timeout: float = 30.0
    #: Live connections at once, all principals together; a new one over it is
    #: answered 503 (Retry-After) / WebSocket close 1013.
    max_connections: int = 1000
    #: Live connections of one principal at once (every connection is principal
    #: ``local`` without tokens), so one client cannot take every slot; 503 / 1013 over it.
    max_connections_per_principal: int = 64
    #: Agent subprocesses at once when every connection spawns one (``-- AGENT``: about
    #: 10 MB each); a connection over it is refused 503 / 1013 instead of spawning.
    max_agents: int = 32
    #: Seconds a client has to send a whole request head once its socket is open or its
    #: last response ended (an idle or trickling socket is closed; uvicorn only).
    header_timeout: float = 10.0
    #: Seconds an idle keep-alive socket stays open between requests (uvicorn only).
    keep_alive: float = 5.0
    #: Open sockets the server takes before answering 503 itself (uvicorn's
    #: ``limit_concurrency``): room for an SSE stream and a POST per connection.
    max_sockets: int = 2048
    #: Largest request head in bytes (uvicorn's h11 ``max_incomplete_event_size``).
    max_header_size: int = 16 * 1024
    #: Seconds a request body may take to arrive in full (408 after).
    body_timeout: float = 30.0
    #: Seconds a refused client is told to wait (``Retry-After``).
    retry_after: int = 5
    max_session_streams: int = 1024

    @property
    def grace(self) -> float:
        """The resume grace in seconds (``resume_grace``, else the retention's age bound)."""
        return self.resume_grace if self.resume_grace is not None else self.retention.seconds

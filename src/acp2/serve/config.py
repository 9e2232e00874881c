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

#: The principal of every connection when no token is configured (loopback use).
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
    max_connections: int = 1000
    max_session_streams: int = 1024

    @property
    def grace(self) -> float:
        """The resume grace in seconds (``resume_grace``, else the retention's age bound)."""
        return self.resume_grace if self.resume_grace is not None else self.retention.seconds

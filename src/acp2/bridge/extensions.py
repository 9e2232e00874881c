"""Extension notifications through the translating bridges.

Both ACP versions reserve method names that start with ``_`` for extensions, with the
same envelope, so an extension notification has the same place on the other side: the
bridges pass it on with its params unchanged (``_auth/status_update`` from a newer v2
agent reaches a v1 editor; a v1 agent's ``_x/progress`` reaches a v2 client). Any other
notification without a handler has no counterpart in the other version: it is logged at
debug level, as a connection logs a notification it has no handler for, and dropped.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from msgspec import Raw

from acp2.rpc.link import Link

__all__ = ["forward_extensions"]

log = logging.getLogger("acp2.bridge")


def forward_extensions(source: Link, target: Link, name: str) -> None:
    """Pass each ``_``-prefixed notification ``source`` has no handler for on to
    ``target`` (awaiting ``target``'s backpressure); ``name`` labels the debug line
    of the ones dropped. Replaces ``source``'s unknown-notification handler."""
    source.on_unknown_notification(_forwarder(target, name))


def _forwarder(target: Link, name: str) -> Callable[[str, Raw | None], Awaitable[None] | None]:
    def forward(method: str, params: Raw | None) -> Awaitable[None] | None:
        if not method.startswith("_"):
            log.debug("%s: not forwarded, no counterpart: notification %s", name, method)
            return None
        return target.notify(method, params)

    return forward

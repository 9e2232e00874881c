"""``_`` extension methods across the translating bridges: the peers' business, passed on.

Both ACP versions reserve method names that start with ``_`` for extensions, with the
same envelope, so an extension has the same place on the other side: a request a bridge
has no handler for is asked of the other side when its name starts with ``_`` and
answered with that side's answer or error; a notification is passed on with its params
unchanged (``_auth/status_update`` from a newer v2 agent reaches a v1 editor; a v1
agent's ``_x/progress`` reaches a v2 client). Any other unknown request stays
``-32601``; any other unknown notification has no counterpart in the other version: it
is logged at debug level, as a connection logs a notification it has no handler for, and
dropped.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from msgspec import Raw

from acp2.errors import ConnectionClosed, MethodNotFound
from acp2.rpc.link import Link

__all__ = ["forward_extensions"]

log = logging.getLogger("acp2.bridge")


def forward_extensions(source: Link, target: Link, name: str) -> None:
    """Pass each ``_``-prefixed request and notification ``source`` has no handler for on
    to ``target`` (a notification awaits ``target``'s backpressure); ``name`` labels the
    debug line of the notifications dropped. Replaces ``source``'s unknown-request and
    unknown-notification handlers: call it once per direction."""
    source.on_unknown_request(_asker(target))
    source.on_unknown_notification(_forwarder(target, name))


def _asker(target: Link) -> Callable[[str, Raw | None], Awaitable[Raw]]:
    async def ask(method: str, params: Raw | None) -> Raw:
        if not method.startswith("_"):
            raise MethodNotFound(f"Method not found: {method}")
        if target.closed:
            raise ConnectionClosed("the other side of the bridge is gone")
        result: Raw = await target.request(method, params, Raw)
        return result

    return ask


def _forwarder(target: Link, name: str) -> Callable[[str, Raw | None], Awaitable[None] | None]:
    def forward(method: str, params: Raw | None) -> Awaitable[None] | None:
        if not method.startswith("_"):
            log.debug("%s: not forwarded, no counterpart: notification %s", name, method)
            return None
        return target.notify(method, params)

    return forward

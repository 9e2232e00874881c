"""``_`` extension methods across a bridge: the two peers' business, passed on as they are.

Neither version translates an extension (``_zed/...``, ``_acp2/...``): a request a
bridge has no handler for is asked of the other side when its name starts with ``_``
and answered with that side's answer or error; a notification is passed on. Any other
unknown method stays ``-32601`` (requests) or is dropped (notifications), as everywhere.
"""

from __future__ import annotations

from functools import partial

from msgspec import Raw

from acp2.errors import ConnectionClosed, MethodNotFound
from acp2.rpc.link import Link

__all__ = ["pass_extensions"]


def pass_extensions(one: Link, other: Link) -> None:
    """Let ``_`` extension requests and notifications cross between ``one`` and
    ``other``, both ways (install after the method table's handlers)."""
    one.on_unknown_request(partial(_ask, other))
    other.on_unknown_request(partial(_ask, one))
    one.on_unknown_notification(partial(_tell, other))
    other.on_unknown_notification(partial(_tell, one))


async def _ask(to: Link, method: str, params: Raw | None) -> Raw:
    if not method.startswith("_"):
        raise MethodNotFound(f"Method not found: {method}")
    if to.closed:
        raise ConnectionClosed("the other side of the bridge is gone")
    result: Raw = await to.request(method, params, Raw)
    return result


def _tell(to: Link, method: str, params: Raw | None) -> None:
    if method.startswith("_") and not to.closed:
        to.send_notification_nowait(method, params)

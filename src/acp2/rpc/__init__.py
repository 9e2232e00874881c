"""JSON-RPC 2.0 for ACP: a sans-IO peer, and the async Connection that feeds it.

:class:`~acp2.rpc.peer.Peer` is the whole protocol without I/O (messages or bytes in,
:mod:`~acp2.rpc.events` out, ``send_*`` -> bytes), built from the sans-IO pieces
:mod:`~acp2.rpc.framing`, :mod:`~acp2.rpc.messages`, :mod:`~acp2.rpc.pending`,
:mod:`~acp2.rpc.routes` and :mod:`~acp2.rpc.sniff`; none of them imports an async
library. :class:`Connection` is the asyncio shell around one peer; this package loads
it (and anyio) lazily, so importing the sans-IO modules stays pure. A request handler
may return a :class:`~acp2.rpc.later.Later` to answer after it returned.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from acp2.rpc.connection import Connection
    from acp2.rpc.framing import LineFramer
    from acp2.rpc.later import Later

__all__ = ["Connection", "Later", "LineFramer"]


def __getattr__(name: str) -> Any:
    if name == "Connection":
        from acp2.rpc.connection import Connection

        return Connection
    if name == "LineFramer":
        from acp2.rpc.framing import LineFramer

        return LineFramer
    if name == "Later":
        from acp2.rpc.later import Later

        return Later
    raise AttributeError(f"module 'acp2.rpc' has no attribute {name!r}")

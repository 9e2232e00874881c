"""JSON-RPC 2.0 for ACP: sans-IO framing, envelopes and id tables, and the async Connection.

The sans-IO modules (:mod:`~acp2.rpc.framing`, :mod:`~acp2.rpc.messages`,
:mod:`~acp2.rpc.pending`, :mod:`~acp2.rpc.routes`, :mod:`~acp2.rpc.sniff`) import no
async library; this package loads :class:`Connection` (and anyio) lazily, so importing
them stays pure.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from acp2.rpc.connection import Connection
    from acp2.rpc.framing import LineFramer

__all__ = ["Connection", "LineFramer"]


def __getattr__(name: str) -> Any:
    if name == "Connection":
        from acp2.rpc.connection import Connection

        return Connection
    if name == "LineFramer":
        from acp2.rpc.framing import LineFramer

        return LineFramer
    raise AttributeError(f"module 'acp2.rpc' has no attribute {name!r}")

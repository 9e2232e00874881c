"""Transports: bytes in, bytes out (stdio, in-memory pair).

Names are loaded lazily so importing one transport does not import the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from acp2._lazy import exports

if TYPE_CHECKING:
    from acp2.transport.base import Transport
    from acp2.transport.memory import MemoryTransport, memory_pair
    from acp2.transport.stdio import AgentProcess, StdioTransport, serve_stdio, spawn_agent

__all__ = [
    "AgentProcess",
    "MemoryTransport",
    "StdioTransport",
    "Transport",
    "memory_pair",
    "serve_stdio",
    "spawn_agent",
]

_WHERE = {
    "Transport": "acp2.transport.base",
    "MemoryTransport": "acp2.transport.memory",
    "memory_pair": "acp2.transport.memory",
    "AgentProcess": "acp2.transport.stdio",
    "StdioTransport": "acp2.transport.stdio",
    "serve_stdio": "acp2.transport.stdio",
    "spawn_agent": "acp2.transport.stdio",
}

__getattr__, __dir__ = exports(__name__, _WHERE, globals())

"""Transports: bytes in, bytes out (stdio, in-memory pair).

Names are loaded lazily so importing one transport does not import the others.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

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
    "Transport": "base",
    "MemoryTransport": "memory",
    "memory_pair": "memory",
    "AgentProcess": "stdio",
    "StdioTransport": "stdio",
    "serve_stdio": "stdio",
    "spawn_agent": "stdio",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'acp2.transport' has no attribute {name!r}")
    return getattr(importlib.import_module(f"acp2.transport.{module}"), name)

"""acp2: the Agent Client Protocol, version 2, for Python.

The top-level names are loaded lazily, so ``import acp2`` costs almost nothing; import
the layer you need directly for the full API: :mod:`acp2.agent` (write an agent),
:mod:`acp2.client` (drive an agent), :mod:`acp2.schema` (wire models), :mod:`acp2.rpc`
(the JSON-RPC peer), :mod:`acp2.state` (client-side session state), :mod:`acp2.errors`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from acp2._lazy import exports

if TYPE_CHECKING:  # the names below, for type checkers and IDEs
    from acp2.agent import Agent as Agent
    from acp2.agent import AgentSession as AgentSession
    from acp2.agent import Turn as Turn
    from acp2.client import ClientConnection as ClientConnection
    from acp2.client import ClientSession as ClientSession
    from acp2.client import Work as Work
    from acp2.client import allow_all as allow_all
    from acp2.client import connect as connect
    from acp2.client import deny_all as deny_all
    from acp2.errors import Acp2Error as Acp2Error
    from acp2.errors import ConnectionClosed as ConnectionClosed
    from acp2.errors import LocalProtocolError as LocalProtocolError
    from acp2.errors import RemoteProtocolError as RemoteProtocolError
    from acp2.errors import RequestError as RequestError
    from acp2.rpc import Connection as Connection
    from acp2.state import SessionState as SessionState

__version__ = "0.1.0"

#: name -> module that defines it (imported on first access).
_LAZY: dict[str, str] = {
    "Acp2Error": "acp2.errors",
    "Agent": "acp2.agent",
    "AgentSession": "acp2.agent",
    "ClientConnection": "acp2.client",
    "ClientSession": "acp2.client",
    "Connection": "acp2.rpc",
    "ConnectionClosed": "acp2.errors",
    "LocalProtocolError": "acp2.errors",
    "RemoteProtocolError": "acp2.errors",
    "RequestError": "acp2.errors",
    "SessionState": "acp2.state",
    "Turn": "acp2.agent",
    "Work": "acp2.client",
    "allow_all": "acp2.client",
    "connect": "acp2.client",
    "deny_all": "acp2.client",
}

__all__ = sorted([*_LAZY, "__version__"])


__getattr__, _ = exports(__name__, _LAZY, globals())


def __dir__() -> list[str]:
    return __all__

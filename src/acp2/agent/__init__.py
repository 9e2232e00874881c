"""The agent runtime: write what your agent does; acp2 keeps the v2 prompt lifecycle.

See ``docs/writing-an-agent.md``. The pieces: :class:`Agent` (configuration and
handlers), :class:`Turn` (what a prompt handler reports), :class:`AgentSession`,
:class:`HistoryStore` (SQLite session history).


The names are loaded on first use (PEP 562): ``from acp2.agent import Agent`` imports
the configuration object only, and a served connection imports the session runtime
after it has answered ``initialize`` (:mod:`acp2.agent.early`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from acp2._lazy import exports

if TYPE_CHECKING:  # the names below, for type checkers and IDEs
    from acp2.agent.app import Agent as Agent
    from acp2.agent.app import AuthMethodSpec as AuthMethodSpec
    from acp2.agent.children import Delegation as Delegation
    from acp2.agent.elicit import ElicitationContentError as ElicitationContentError
    from acp2.agent.elicit import ElicitationResult as ElicitationResult
    from acp2.agent.elicit import ElicitationUnsupported as ElicitationUnsupported
    from acp2.agent.handles import TerminalHandle as TerminalHandle
    from acp2.agent.handles import ToolCallHandle as ToolCallHandle
    from acp2.agent.messaging import ReceivedMessage as ReceivedMessage
    from acp2.agent.messaging import SessionMessageHandle as SessionMessageHandle
    from acp2.agent.permission import PermissionResult as PermissionResult
    from acp2.agent.permission import default_options as default_options
    from acp2.agent.session import AgentSession as AgentSession
    from acp2.agent.turn import Turn as Turn
    from acp2.store.sqlite import HistoryStore as HistoryStore

#: name -> module that defines it (imported on first access).
_LAZY: dict[str, str] = {
    "Agent": "acp2.agent.app",
    "AgentSession": "acp2.agent.session",
    "AuthMethodSpec": "acp2.agent.app",
    "Delegation": "acp2.agent.children",
    "ElicitationContentError": "acp2.agent.elicit",
    "ElicitationResult": "acp2.agent.elicit",
    "ElicitationUnsupported": "acp2.agent.elicit",
    "HistoryStore": "acp2.store.sqlite",
    "PermissionResult": "acp2.agent.permission",
    "ReceivedMessage": "acp2.agent.messaging",
    "SessionMessageHandle": "acp2.agent.messaging",
    "TerminalHandle": "acp2.agent.handles",
    "ToolCallHandle": "acp2.agent.handles",
    "Turn": "acp2.agent.turn",
    "default_options": "acp2.agent.permission",
}

__all__ = sorted(_LAZY)

__getattr__, __dir__ = exports(__name__, _LAZY, globals())

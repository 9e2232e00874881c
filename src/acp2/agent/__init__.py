"""The agent runtime: write what your agent does; acp2 keeps the v2 prompt lifecycle.

See ``docs/writing-an-agent.md``. The pieces: :class:`Agent` (configuration and
handlers), :class:`Turn` (what a prompt handler reports), :class:`AgentSession`,
:class:`HistoryStore` (SQLite session history).
"""

from acp2.agent.app import Agent, AuthMethodSpec
from acp2.agent.elicit import ElicitationContentError, ElicitationResult, ElicitationUnsupported
from acp2.agent.handles import TerminalHandle, ToolCallHandle
from acp2.agent.permission import PermissionResult, default_options
from acp2.agent.session import AgentSession
from acp2.agent.store import HistoryStore
from acp2.agent.turn import Turn

__all__ = [
    "Agent",
    "AgentSession",
    "AuthMethodSpec",
    "ElicitationContentError",
    "ElicitationResult",
    "ElicitationUnsupported",
    "HistoryStore",
    "PermissionResult",
    "TerminalHandle",
    "ToolCallHandle",
    "Turn",
    "default_options",
]

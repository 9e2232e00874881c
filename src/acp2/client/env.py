"""What a session needs from its connection, and nothing more: :class:`SessionEnv`.

A :class:`~acp2.client.ClientSession` checks a prompt's content against the agent's
capabilities and answers permission requests with the connection's policy. It reads
both here, not through the connection: a session holds no pointer back to the
:class:`~acp2.client.ClientConnection` that made it, so it cannot reach the connection's
other state (its sessions, its MCP servers, its link) and the two can be reasoned about,
and tested, apart.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from acp2.client.permissions import PermissionPolicy
    from acp2.schema import AgentCapabilities

__all__ = ["SessionEnv"]


@dataclass(eq=False, slots=True)
class SessionEnv:
    """The connection's facts its sessions read: ``agent_capabilities`` (from the
    ``initialize`` answer) and ``permission_policy`` (how permission requests are
    answered). One object per connection, shared by its sessions: the connection's
    ``permission_policy`` and ``agent_capabilities`` read and write it, so a change
    reaches every session at once."""

    agent_capabilities: AgentCapabilities
    permission_policy: PermissionPolicy

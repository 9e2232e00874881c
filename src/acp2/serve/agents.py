"""What serves the agent side of each remote connection.

* :func:`in_process`: one :class:`~acp2.agent.app.Agent` object for every connection of
  the application, so its sessions outlive connections (a client that reconnects resumes
  them on a new connection). ``Agent.serve`` reads the client's ``initialize``: a v1
  client is served through the v1 front bridge, any other as v2. Each connection is
  served as its principal (from its bearer token), so the agent binds every session to
  the principal that created it (:mod:`acp2.agent.session_hub`); a tokenless server's
  connections are the local user (principal None), as a stdio client is.
* :func:`command`: one subprocess per connection (``spawn_agent``), its stdio copied to
  and from the connection frame for frame (``pass_through``: whatever ACP version the
  two ends speak, unchanged). Its stderr goes to the ``acp2.serve.agent`` logger.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

from acp2.serve.config import LOCAL_PRINCIPAL
from acp2.serve.registry import ServeFn
from acp2.serve.remote_connection import RemoteConnection

if TYPE_CHECKING:
    from acp2.agent.app import Agent

__all__ = ["agent_principal", "command", "in_process"]

_agent_log = logging.getLogger("acp2.serve.agent")


def in_process(agent: Agent) -> ServeFn:
    """Serve every connection with ``agent`` (shared: sessions outlive connections), as
    the connection's principal."""

    async def serve(connection: RemoteConnection) -> None:
        """Serve one connection until its input ends."""
        await agent.serve(connection, principal=agent_principal(connection.principal))

    return serve


def agent_principal(principal: str) -> str | None:
    """The principal the agent runtime is given for a connection of ``principal``:
    :data:`~acp2.serve.config.LOCAL_PRINCIPAL` (no token configured) is the local user,
    None, who also owns the sessions stored before sessions had a principal."""
    return None if principal == LOCAL_PRINCIPAL else principal


def command(argv: Sequence[str]) -> ServeFn:
    """Serve every connection with a new ``argv`` subprocess, spliced byte for byte."""
    argv = list(argv)
    if not argv:
        raise ValueError("an agent command is needed")

    async def serve(connection: RemoteConnection) -> None:
        """Start the agent, copy both ways until either side ends, stop the agent."""
        from acp2.bridge.passthrough import pass_through
        from acp2.transport.stdio import spawn_agent

        async with spawn_agent(argv, stderr=_agent_log) as process:
            await pass_through(connection, process, client_head=b"", agent_head=b"", version="")

    return serve

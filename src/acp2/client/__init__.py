"""The client runtime: launch or connect to an ACP v2 agent and drive its sessions.

::

    from acp2.client import allow_all, connect

    async with connect(["acp2", "test-agent"], permissions=allow_all) as client:
        session = await client.new_session()
        work = await session.prompt("echo hello")
        async for update in work:      # every update of this work, until idle
            ...
        print(await work.wait(), work.text)    # "end_turn hello"

See ``docs/writing-a-client.md``. The pieces: :func:`connect` / :func:`connect_transport`
/ :func:`connect_url` (a remote agent, ``docs/remote.md``) (initialized
:class:`ClientConnection`), :class:`ClientSession` (reduced state, prompt,
cancel, close), :class:`Work` (one prompt's updates until idle), the permission
policies :func:`allow_all`, :func:`deny_all`, :func:`interactive`, the elicitation
policies :func:`decline_all`, :func:`accept_defaults` (``connect(..., elicitation=)``). The errors a
dead or broken agent causes: :class:`AgentClosed` (a ``ConnectionClosed``; its
subclass :class:`AgentExited` before ``initialize`` was answered),
:class:`AgentStartError` (``AgentNotStarted`` is its 0.1 name), :class:`AgentStrayOutput`.

The names are loaded on first use (PEP 562), so ``import acp2.client`` itself imports
nothing heavy; ``from acp2.client import connect`` imports the runtime (asyncio, anyio,
msgspec, the schema and the JSON-RPC peer), which any client needs to talk at all.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from acp2._lazy import exports

if TYPE_CHECKING:  # the names below, for type checkers and IDEs
    from acp2.client.connection import AgentClosed as AgentClosed
    from acp2.client.connection import ClientConnection as ClientConnection
    from acp2.client.elicitation import ElicitationPolicy as ElicitationPolicy
    from acp2.client.elicitation import ElicitationRequest as ElicitationRequest
    from acp2.client.elicitation import accept_defaults as accept_defaults
    from acp2.client.elicitation import decline_all as decline_all
    from acp2.client.launch import client_info as client_info
    from acp2.client.launch import connect as connect
    from acp2.client.launch import connect_transport as connect_transport
    from acp2.client.permissions import PermissionPolicy as PermissionPolicy
    from acp2.client.permissions import PermissionRequest as PermissionRequest
    from acp2.client.permissions import allow_all as allow_all
    from acp2.client.permissions import deny_all as deny_all
    from acp2.client.permissions import interactive as interactive
    from acp2.client.remote import connect_url as connect_url
    from acp2.client.session import ClientSession as ClientSession
    from acp2.client.session import UpdateListener as UpdateListener
    from acp2.client.session import new_idempotency_key as new_idempotency_key
    from acp2.client.startup import AgentExited as AgentExited
    from acp2.client.startup import AgentNotStarted as AgentNotStarted
    from acp2.client.startup import AgentStrayOutput as AgentStrayOutput
    from acp2.client.work import Skipped as Skipped
    from acp2.client.work import Work as Work
    from acp2.errors import AgentStartError as AgentStartError

#: name -> module that defines it (imported on first access).
_LAZY: dict[str, str] = {
    "AgentClosed": "acp2.client.connection",
    "AgentExited": "acp2.client.startup",
    "AgentNotStarted": "acp2.client.startup",
    "AgentStartError": "acp2.errors",
    "AgentStrayOutput": "acp2.client.startup",
    "ClientConnection": "acp2.client.connection",
    "ClientSession": "acp2.client.session",
    "ElicitationPolicy": "acp2.client.elicitation",
    "ElicitationRequest": "acp2.client.elicitation",
    "PermissionPolicy": "acp2.client.permissions",
    "PermissionRequest": "acp2.client.permissions",
    "Skipped": "acp2.client.work",
    "UpdateListener": "acp2.client.session",
    "Work": "acp2.client.work",
    "accept_defaults": "acp2.client.elicitation",
    "allow_all": "acp2.client.permissions",
    "client_info": "acp2.client.launch",
    "connect": "acp2.client.launch",
    "connect_transport": "acp2.client.launch",
    "connect_url": "acp2.client.remote",
    "decline_all": "acp2.client.elicitation",
    "deny_all": "acp2.client.permissions",
    "interactive": "acp2.client.permissions",
    "new_idempotency_key": "acp2.client.session",
}

__all__ = sorted(_LAZY)

__getattr__, __dir__ = exports(__name__, _LAZY, globals())

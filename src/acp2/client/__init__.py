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
"""

from acp2.client.connection import AgentClosed, ClientConnection
from acp2.client.elicitation import (
    ElicitationPolicy,
    ElicitationRequest,
    accept_defaults,
    decline_all,
)
from acp2.client.launch import client_info, connect, connect_transport
from acp2.client.permissions import (
    PermissionPolicy,
    PermissionRequest,
    allow_all,
    deny_all,
    interactive,
)
from acp2.client.remote import connect_url
from acp2.client.session import ClientSession, UpdateListener, new_idempotency_key
from acp2.client.startup import AgentExited, AgentNotStarted, AgentStrayOutput
from acp2.client.work import Skipped, Work
from acp2.errors import AgentStartError

__all__ = [
    "AgentClosed",
    "AgentExited",
    "AgentNotStarted",
    "AgentStartError",
    "AgentStrayOutput",
    "ClientConnection",
    "ClientSession",
    "ElicitationPolicy",
    "ElicitationRequest",
    "PermissionPolicy",
    "PermissionRequest",
    "Skipped",
    "UpdateListener",
    "Work",
    "accept_defaults",
    "allow_all",
    "client_info",
    "connect",
    "connect_transport",
    "connect_url",
    "decline_all",
    "deny_all",
    "interactive",
    "new_idempotency_key",
]

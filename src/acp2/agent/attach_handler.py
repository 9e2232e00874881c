"""The ``_acp2/session/attach`` handler: a second client joins a live session.

Order of what the attacher receives, all before the response: the session's whole history
replayed, ``replay_complete``, a ``state_update`` snapshot, ``available_commands_update``;
then every update of the session live, and -- for a controller -- the permission and
elicitation requests still open (:mod:`acp2.agent.session_hub`). The same holds for each
live child session (Preview subagents): its history in the replay, after its
announcement, then its own updates and questions live, each once. Nothing of the snapshot goes
to the clients already attached.

A session that is not live in this process, and one the Agent's ``may_attach`` refuses,
get the same ``-32002`` answer, so a client cannot learn which sessions others hold.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from acp2.agent.emitter import Emitter
from acp2.agent.session_hub import AttachQuery, SessionHub, allowed, owner_of
from acp2.errors import InvalidRequest, ResourceNotFound
from acp2.schema import StateUpdate
from acp2.schema.extensions import AttachSessionRequest, AttachSessionResponse

if TYPE_CHECKING:
    from acp2.agent.sessions import SessionManager

__all__ = ["attach"]


async def attach(manager: SessionManager, params: AttachSessionRequest) -> AttachSessionResponse:
    """Attach ``manager``'s connection to ``params.session_id`` as ``params.role``.

    Raises -32002 (``data.sessionId``) for a session not live here or not allowed,
    -32600 when this connection already holds the session.
    """
    session_id = params.session_id
    if manager.find(session_id) is not None:
        raise InvalidRequest("This connection already holds the session", {"sessionId": session_id})
    hub = await _permitted(manager, params)
    session = await manager.join(hub, params.role, replay=True)
    to_client = Emitter(session.id, manager.connection, None)
    to_client.emit(StateUpdate(state=session.state))
    response = AttachSessionResponse(session_id=session_id, role=params.role, cwd=session.cwd)
    options = manager.current_options(session)
    if options is not None:
        response.config_options = options
    if manager.agent.commands:
        response.available_commands = list(manager.agent.commands)
    manager.send_commands(session, to_client)
    return response


async def _permitted(manager: SessionManager, params: AttachSessionRequest) -> SessionHub:
    """The hub of the live session, if this connection may attach to it."""
    session_id = params.session_id
    hub = manager.runtime.hubs.get(session_id)
    if hub is not None and not hub.session.closed:
        query = AttachQuery(session_id, params.role, owner_of(manager.principal), hub.owner)
        verdict = await allowed(manager.agent.may_attach, query, manager.agent.observers)
        # An async policy may have let the session end meanwhile.
        if verdict and manager.runtime.hubs.get(session_id) is hub and hub.members:
            return hub
    raise ResourceNotFound(
        f"No live session {session_id} that this client may attach to",
        {"sessionId": session_id},
    )

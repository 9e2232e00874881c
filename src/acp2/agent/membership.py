"""How one connection holds its sessions among the Agent's other connections.

:class:`Membership` is the part of :class:`~acp2.agent.sessions.SessionManager` that
knows about the other clients (:mod:`acp2.agent.session_hub`): it makes the hub of each session
the connection opens, detaches the connection when it closes a session or goes away,
answers how it holds a session (controller or observer) and sends what only its own
client is owed. The session-management handlers are in :mod:`acp2.agent.sessions`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from acp2.agent.emitter import Emitter
from acp2.agent.session_hub import Member, SessionHub
from acp2.errors import InvalidRequest

if TYPE_CHECKING:
    from acp2.agent.runtime import AgentRuntime
    from acp2.agent.session import AgentSession
    from acp2.rpc.link import Link
    from acp2.schema import ClientCapabilities
    from acp2.schema.extensions import AttachRole
    from acp2.store.base import SessionStore

__all__ = ["Membership"]


class Membership:
    """The sessions this connection holds (``_live``) as members of their hubs."""

    connection: Link
    store: SessionStore
    runtime: AgentRuntime
    principal: object
    capabilities: Callable[[], ClientCapabilities | None]
    _live: dict[str, AgentSession]

    def host(self, session: AgentSession, owner: str | None) -> None:
        """Make the hub of ``session``, which this connection just opened; ``owner`` is
        the principal the store records for it."""
        hub = self.runtime.hubs[session.id] = SessionHub(session, owner)
        hub.join(self.member("controller", self.connection))

    def member(self, role: AttachRole, sink: Any) -> Member:
        """This connection's membership as ``role``, its frames going to ``sink``."""
        return Member(self.connection, role, self.principal, self.capabilities, sink)

    def leave_all(self) -> None:
        """Detach this connection from every session it holds and give up their leases
        (acp2.store.sqlite_lease); work the other clients still watch goes on (idempotent)."""
        for session_id in list(self._live):
            self._leave(session_id)

    def _leave(self, session_id: str) -> None:
        session = self._live.pop(session_id, None)
        if session is None:
            return
        self.store.release(session_id)
        hub = self.runtime.hubs.get(session_id)
        if hub is None or hub.session is not session:
            return
        if hub.leave(self.connection):
            del self.runtime.hubs[session_id]
        for kid in hub.descendants():  # children this client followed and nobody holds any more
            if not kid.members and self.runtime.hubs.get(kid.session.id) is kid:
                del self.runtime.hubs[kid.session.id]

    def hub(self, session: AgentSession) -> SessionHub | None:
        """The hub of ``session`` (None once nobody holds it)."""
        hub = self.runtime.hubs.get(session.id)
        return hub if hub is not None and hub.session is session else None

    def role(self, session_id: str) -> AttachRole:
        """How this connection holds ``session_id``: ``controller`` unless it attached
        as an observer."""
        hub = self.runtime.hubs.get(session_id)
        member = hub.member(self.connection) if hub is not None else None
        return member.role if member is not None else "controller"

    def require_controller(self, session_id: str, action: str) -> None:
        """Raise -32600 (``data.role``) when this connection only observes the session."""
        if self.role(session_id) == "observer":
            raise InvalidRequest(
                f"This client is attached to the session as an observer: it may not {action}",
                {"sessionId": session_id, "role": "observer"},
            )

    def to_client(self, session: AgentSession) -> Emitter:
        """The emitter for what only this connection's client is owed (a snapshot): the
        session's own while nobody else is attached, else one writing to this connection
        alone."""
        hub = self.hub(session)
        if hub is None or len(hub.members) == 1:
            return session.emitter
        return Emitter(session.id, self.connection, None)

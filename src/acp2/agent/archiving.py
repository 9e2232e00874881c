"""``session/archive`` and ``session/unarchive`` on the agent side (Preview, unstable).

Served and advertised (``capabilities.session.archive``) unless ``Agent(archive=False)``.
An archived session keeps its id and history but leaves the default ``session/list``;
it is kept as a flag in the session's stored data (``acp2.archived``), so it needs no
store migration and survives restarts in SQLite and PostgreSQL alike. Archiving closes the
session on this connection first; one that other clients of this agent hold is refused
(``-32010``, as ``session/delete`` is). Archiving or unarchiving twice succeeds; an
unknown session, or another principal's, is ``-32002``. Unarchiving does not resume.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from acp2.agent.bindings import Binding, bind
from acp2.agent.listing import ARCHIVED_KEY
from acp2.errors import ResourceNotFound, SessionInUse
from acp2.schema.methods import SESSION_ARCHIVE, SESSION_UNARCHIVE
from acp2.schema.session_ops import (
    ArchiveSessionRequest,
    ArchiveSessionResponse,
    UnarchiveSessionRequest,
    UnarchiveSessionResponse,
)

if TYPE_CHECKING:
    from acp2.agent.sessions import SessionManager
    from acp2.store.base import SessionRecord

__all__ = ["bindings"]


def bindings(manager: SessionManager) -> list[Binding]:
    """The two handlers when the agent archives sessions, else none."""
    if not manager.agent.archive:
        return []

    async def on_archive(params: ArchiveSessionRequest) -> ArchiveSessionResponse:
        record = _own(manager, params.session_id)
        hub = manager.runtime.hubs.get(record.id)
        if hub is not None and any(m.connection is not manager.connection for m in hub.members):
            raise SessionInUse(
                "Other clients are attached to the session", {"sessionId": record.id}
            )
        await manager.on_close_checked(record.id)  # a child ends with its parent
        await manager.close(record.id)
        _flag(manager, record, True)
        return ArchiveSessionResponse()

    async def on_unarchive(params: UnarchiveSessionRequest) -> UnarchiveSessionResponse:
        _flag(manager, _own(manager, params.session_id), False)
        return UnarchiveSessionResponse()

    return [bind(SESSION_ARCHIVE, on_archive), bind(SESSION_UNARCHIVE, on_unarchive)]


def _flag(manager: SessionManager, record: SessionRecord, on: bool) -> None:
    data: dict[str, Any] = dict(record.data) if isinstance(record.data, dict) else {}
    if bool(data.get(ARCHIVED_KEY)) == on:
        return  # twice: nothing changes (not even updatedAt)
    if on:
        data[ARCHIVED_KEY] = True
    else:
        data.pop(ARCHIVED_KEY, None)
    manager.store.update_session(record.id, data=data)


def _own(manager: SessionManager, session_id: str) -> SessionRecord:
    record = manager.own_record(session_id)
    if record is None:
        raise ResourceNotFound(f"Unknown session: {session_id}", {"sessionId": session_id})
    return record

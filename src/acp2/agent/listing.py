"""``session/list``: one page of stored sessions (SS-18, SS-19)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Final

from acp2.agent.checks import decode_cursor, encode_cursor
from acp2.errors import InvalidParams
from acp2.schema import ListSessionsRequest, ListSessionsResponse, SessionInfo
from acp2.store.base import SessionRecord, SessionStore

if TYPE_CHECKING:
    from acp2.agent.settings import AgentSettings as Agent

__all__ = ["ARCHIVED_KEY", "archived", "list_page"]

#: The flag ``session/archive`` sets in a session's stored data (acp2.agent.archiving).
ARCHIVED_KEY: Final = "acp2.archived"


def archived(record: SessionRecord) -> bool:
    """Whether the stored session is archived (left out of the default list)."""
    return isinstance(record.data, dict) and bool(record.data.get(ARCHIVED_KEY))


def list_page(
    agent: Agent, store: SessionStore, params: ListSessionsRequest, principal: str | None
) -> ListSessionsResponse:
    """The page of ``principal``'s stored sessions ``params`` asks for, most recently
    updated first, optionally filtered by exact ``cwd``; ``nextCursor`` is set when more
    follow. Raises InvalidParams for a relative ``cwd`` or a malformed cursor."""
    cwd = params.cwd if isinstance(params.cwd, str) else None
    if cwd is not None and not os.path.isabs(cwd):
        raise InvalidParams("cwd must be an absolute path")
    after = decode_cursor(params.cursor) if isinstance(params.cursor, str) else None
    size = max(1, agent.list_page_size)
    records = store.list_sessions(cwd=cwd, after=after, limit=size + 1, principal=principal)
    page = records[:size]
    # Archived sessions (session/archive) are left out; the cursor still follows the
    # stored order, so a page may hold fewer than ``size``.
    shown = [record for record in page if not archived(record)]
    response = ListSessionsResponse(sessions=[_info(agent, record) for record in shown])
    if len(records) > size:
        response.next_cursor = encode_cursor(page[-1].updated_at, page[-1].id)
    return response


def _info(agent: Agent, record: SessionRecord) -> SessionInfo:
    info = SessionInfo(session_id=record.id, cwd=record.cwd, updated_at=record.updated_at)
    if record.title is not None:
        info.title = record.title
    if record.additional_directories and agent.additional_directories:
        info.additional_directories = record.additional_directories
    return info

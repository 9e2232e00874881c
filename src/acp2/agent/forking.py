"""``session/fork`` and ``session/set_title`` on the agent side (Preview, unstable).

Served only when the agent advertises them (``capabilities.session.fork`` /
``.title``: ``Agent.fork`` / ``Agent.set_title``, both on by default), registered from
the method table like every other handler.

* A fork is a new session with the source's stored history copied under a new id; the
  source is left as it was (``rfds/session-fork``). The new session is live on this
  connection at once, like one from ``session/new``. ``Agent.on_fork`` copies what the
  author keeps in memory (the coding agent's conversation with its model).
* A title the user chose is stored and sent as ``session_info_update`` (recorded, so
  ``session/list`` and a replay show it; ``rfds/session-set-title``). Whitespace runs
  become one space; an empty title is refused (``-32602``).

Both act only on sessions of this connection's principal: another's is unknown
(``-32002``), as for ``session/resume``.
"""

from __future__ import annotations

import secrets
from typing import TYPE_CHECKING, Final

from acp2.agent.bindings import Binding, bind
from acp2.agent.checks import check_mcp, check_roots
from acp2.agent.system_prompt import SYSTEM_PROMPT_KEY, check_system_prompt, keep
from acp2.errors import InvalidParams, ResourceNotFound
from acp2.schema import SessionInfoUpdate
from acp2.schema.codec import encode
from acp2.schema.methods import SESSION_FORK, SESSION_SET_TITLE
from acp2.schema.session_ops import (
    ForkSessionRequest,
    ForkSessionResponse,
    SetSessionTitleRequest,
    SetSessionTitleResponse,
)

if TYPE_CHECKING:
    from acp2.agent.sessions import SessionManager
    from acp2.store.base import SessionRecord

__all__ = ["MAX_TITLE", "bindings", "fork_session", "set_title"]

#: The longest title stored (characters); a longer one is cut there.
MAX_TITLE: Final = 200


def bindings(manager: SessionManager) -> list[Binding]:
    """The handlers ``manager``'s agent advertises: fork and set_title, each if enabled."""
    agent = manager.agent
    found: list[Binding] = []
    if agent.fork:

        async def on_fork(params: ForkSessionRequest) -> ForkSessionResponse:
            return await fork_session(manager, params)

        found.append(bind(SESSION_FORK, on_fork))
    if agent.set_title:

        async def on_title(params: SetSessionTitleRequest) -> SetSessionTitleResponse:
            return await set_title(manager, params)

        found.append(bind(SESSION_SET_TITLE, on_title))
    return found


async def fork_session(manager: SessionManager, params: ForkSessionRequest) -> ForkSessionResponse:
    """Copy the stored history of ``params.session_id`` into a new session rooted at
    ``params.cwd`` and open it on this connection; return its id and options."""
    source = _own(manager, params.session_id)
    dirs = check_roots(manager.agent, params.cwd, params.additional_directories)
    mcp = check_mcp(manager.agent, params.mcp_servers)
    system = check_system_prompt(manager.agent, params.system_prompt)
    store = manager.store
    store.flush()  # the source's queued updates belong in the copy too
    new_id = f"sess_{secrets.token_hex(12)}"
    store.create_session(new_id, params.cwd, dirs, manager.owner)
    for body in list(store.updates(source.id)):
        store.append(new_id, body)
    if source.title is not None:
        store.set_title(new_id, source.title)
    store.flush()
    store.acquire(new_id)
    session = manager.open_forked(new_id, params.cwd, dirs, mcp)
    hook = manager.agent.on_fork
    if hook is not None:
        try:
            await hook(manager.runtime.shared(source.id).data, session)
        except BaseException:
            # The client gets an error, so there is no fork: leave no trace of it.
            await manager.close(new_id)
            store.delete_session(new_id)
            manager.runtime.forget(new_id)
            raise
    source_prompt = manager.runtime.shared(source.id).data.get(SYSTEM_PROMPT_KEY)
    keep(session, system if system is not None else source_prompt)
    response = ForkSessionResponse(session_id=new_id)
    options = manager.current_options(session)
    if options is not None:
        response.config_options = options
    return response


async def set_title(
    manager: SessionManager, params: SetSessionTitleRequest
) -> SetSessionTitleResponse:
    """Store the title (normalised) and tell the session's clients; return it."""
    title = " ".join(params.title.split())[:MAX_TITLE]
    if not title:
        raise InvalidParams("The title is empty")
    record = _own(manager, params.session_id)
    update = SessionInfoUpdate(title=title)
    hub = manager.runtime.hubs.get(record.id)  # live here or on another connection
    live = manager.find(record.id) or (hub.session if hub is not None else None)
    if live is not None:
        live.emitter.emit(update)  # records it, stores the title, sends it to every client
    else:
        manager.store.append(record.id, encode(update))
        manager.store.set_title(record.id, title)
    manager.store.flush()
    return SetSessionTitleResponse(title=title)


def _own(manager: SessionManager, session_id: str) -> SessionRecord:
    record = manager.own_record(session_id)
    if record is None:
        raise ResourceNotFound(f"Unknown session: {session_id}", {"sessionId": session_id})
    return record

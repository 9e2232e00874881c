"""What the runtime keeps for an :class:`~acp2.agent.Agent` across its connections.

The ``Agent`` is configuration only. The state that outlives one connection -- the opened
history store, each session's author dict (``AgentSession.data``) and its current config
option values, and the :class:`~acp2.agent.session_hub.SessionHub` of each live session (the
connections attached to it) -- lives here, in an :class:`AgentRuntime` per Agent object, found with
:func:`runtime_for` (held weakly: it goes away with its Agent).
"""

from __future__ import annotations

import os
import weakref
from typing import TYPE_CHECKING

from acp2.agent.group_commit import GroupCommit
from acp2.agent.session import SessionShared
from acp2.store import SessionStore, is_database_url
from acp2.store.base import StoreSpec
from acp2.store.leasing import default_lease_ttl
from acp2.store.sqlite import HistoryStore, default_store_path

if TYPE_CHECKING:
    from acp2.agent.session_hub import SessionHub
    from acp2.agent.settings import AgentSettings as Agent

__all__ = ["AgentRuntime", "open_store", "runtime_for"]


def open_store(spec: StoreSpec, name: str) -> SessionStore:
    """The store ``spec`` names: itself if it is a store; a ``postgresql://`` URL opens
    :class:`acp2.store.postgres.PostgresStore` (:class:`ImportError` saying which extra to
    install when psycopg is missing); a path opens a SQLite :class:`HistoryStore`; None
    the default file of the agent ``name``. Leases opened here last ``$ACP2_LEASE_TTL``
    seconds (default 30)."""
    if is_database_url(spec):
        from acp2.store.postgres import PostgresStore  # psycopg only when asked for

        assert isinstance(spec, str)
        return PostgresStore(spec, lease_ttl=default_lease_ttl())
    if spec is None or isinstance(spec, (str, os.PathLike)):
        return HistoryStore(spec or default_store_path(name), lease_ttl=default_lease_ttl())
    return spec


class AgentRuntime:
    """The history store and the per-session shared state (:class:`SessionShared`) of one
    Agent."""

    def __init__(self, store: StoreSpec, name: str) -> None:
        self._store_spec = store
        self._name = name
        self._store: SessionStore | None = None
        self._sessions: dict[str, SessionShared] = {}
        #: The live sessions of this Agent by id: the connections attached to each.
        self.hubs: dict[str, SessionHub] = {}
        #: The flush new sessions wait for, shared by those made in one loop pass.
        self.commits = GroupCommit(lambda: self.store.flush())

    @property
    def store(self) -> SessionStore:
        """The history store, opened on first use (:func:`open_store`)."""
        if self._store is None:
            self._store = open_store(self._store_spec, self._name)
        return self._store

    def shared(self, session_id: str) -> SessionShared:
        """The shared state of ``session_id`` (created on first use)."""
        shared = self._sessions.get(session_id)
        if shared is None:
            shared = self._sessions[session_id] = SessionShared()
        return shared

    def forget(self, session_id: str) -> None:
        """Drop the shared state of a deleted session."""
        self._sessions.pop(session_id, None)


_RUNTIMES: weakref.WeakKeyDictionary[Agent, AgentRuntime] = weakref.WeakKeyDictionary()


def runtime_for(agent: Agent) -> AgentRuntime:
    """The one :class:`AgentRuntime` of ``agent`` (created on first use)."""
    runtime = _RUNTIMES.get(agent)
    if runtime is None:
        runtime = _RUNTIMES[agent] = AgentRuntime(agent.store, agent.name)
    return runtime

"""What the runtime keeps for an :class:`~acp2.agent.Agent` across its connections.

The ``Agent`` is configuration only. The state that outlives one connection -- the opened
history store, each session's author dict (``AgentSession.data``) and its current config
option values, and the :class:`~acp2.agent.attach.SessionHub` of each live session (the
connections attached to it) -- lives here, in an :class:`AgentRuntime` per Agent object, found with
:func:`runtime_for` (held weakly: it goes away with its Agent).
"""

from __future__ import annotations

import os
import weakref
from typing import TYPE_CHECKING

from acp2.agent.session import SessionShared
from acp2.agent.store import HistoryStore, default_store_path

if TYPE_CHECKING:
    from acp2.agent.attach import SessionHub
    from acp2.agent.settings import AgentSettings as Agent

__all__ = ["AgentRuntime", "runtime_for"]


class AgentRuntime:
    """The history store and the per-session shared state (:class:`SessionShared`) of one
    Agent."""

    def __init__(self, store: HistoryStore | str | os.PathLike[str] | None, name: str) -> None:
        self._store_spec = store
        self._name = name
        self._store: HistoryStore | None = None
        self._sessions: dict[str, SessionShared] = {}
        #: The live sessions of this Agent by id: the connections attached to each.
        self.hubs: dict[str, SessionHub] = {}

    @property
    def store(self) -> HistoryStore:
        """The history store, opened on first use (the configured one, a path, or the
        default file under the user's data directory)."""
        if self._store is None:
            spec = self._store_spec
            if isinstance(spec, HistoryStore):
                self._store = spec
            else:
                self._store = HistoryStore(spec or default_store_path(self._name))
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

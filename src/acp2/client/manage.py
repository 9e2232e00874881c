"""Session management and auth on a client connection: new, list, resume, delete, login.

A mixin of :class:`acp2.client.ClientConnection`; every method refuses locally (raising
:class:`~acp2.errors.LocalProtocolError`, sending nothing) what the agent did not
advertise, and raises the agent's :class:`~acp2.errors.RequestError` on an error answer.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypeVar, cast

from msgspec import UNSET

from acp2.client.checks import (
    check_absolute,
    check_auth_method,
    check_delete,
    check_directories,
    check_mcp_servers,
    session_capabilities,
)
from acp2.client.session import ClientSession, UpdateListener
from acp2.errors import ResourceNotFound
from acp2.schema import (
    AgentCapabilities,
    AvailableCommandsUpdate,
    ConfigOptionUpdate,
    DeleteSessionRequest,
    DeleteSessionResponse,
    ListSessionsRequest,
    ListSessionsResponse,
    LoginAuthRequest,
    LoginAuthResponse,
    LogoutAuthRequest,
    LogoutAuthResponse,
    NewSessionRequest,
    NewSessionResponse,
    ReplayFromStart,
    ResumeSessionRequest,
    ResumeSessionResponse,
    SessionInfo,
)

if TYPE_CHECKING:
    from acp2.client.connection import ClientConnection

__all__ = ["SessionManagement"]

R = TypeVar("R")
PathLike = str | os.PathLike[str]


class SessionManagement:
    """Session and auth methods; mixed into :class:`acp2.client.ClientConnection`."""

    if TYPE_CHECKING:
        agent_capabilities: AgentCapabilities
        auth_methods: list[Any]
        default_cwd: str
        sessions: dict[str, ClientSession]

        async def _request(self, method: str, params: Any, result_type: type[R]) -> R: ...
        def _attach(self, session: ClientSession) -> None: ...
        def _detach(self, session: ClientSession) -> None: ...

    def _self(self) -> ClientConnection:
        return cast("ClientConnection", self)

    async def new_session(
        self,
        cwd: PathLike | None = None,
        *,
        additional_directories: Sequence[PathLike] | None = None,
        mcp_servers: Sequence[Any] | None = None,
        on_update: UpdateListener | None = None,
    ) -> ClientSession:
        """Create a session rooted at the absolute ``cwd`` (default: the connection's cwd).

        ``on_update`` is added as a listener before any update is delivered, so it also
        sees updates the agent sent before its response (SS-25). The initial config
        options and commands of the response seed the state unless an update already set
        them (D-19). Raises ``LocalProtocolError`` for a relative path or an unadvertised
        capability (SS-05, SS-06, SS-08), the agent's ``RequestError`` otherwise.
        """
        cwd_s, dirs = self._paths(cwd, additional_directories)
        check_mcp_servers(self.agent_capabilities, mcp_servers)
        params = NewSessionRequest(cwd=cwd_s)
        _fill_roots(params, dirs, mcp_servers)
        response = await self._request("session/new", params, NewSessionResponse)
        session = ClientSession(self._self(), response.session_id, cwd_s)
        return self._open(session, response, on_update)

    async def resume(
        self,
        session_id: str,
        *,
        cwd: PathLike | None = None,
        replay: bool = False,
        additional_directories: Sequence[PathLike] | None = None,
        mcp_servers: Sequence[Any] | None = None,
        on_update: UpdateListener | None = None,
    ) -> ClientSession:
        """Reattach to ``session_id`` with ``session/resume``; return a fresh session object.

        ``cwd`` must be the session's own cwd (default: the connection's cwd). With
        ``replay``, the agent first replays the whole conversation (``replayFrom:
        {type:"start"}``), reduced into the new state before this returns (SS-12, SS-14).
        A session without a state snapshot is taken to be idle (D-14). Any older object
        for the same id stops receiving updates.
        """
        cwd_s, dirs = self._paths(cwd, additional_directories)
        check_mcp_servers(self.agent_capabilities, mcp_servers)
        params = ResumeSessionRequest(session_id=session_id, cwd=cwd_s)
        _fill_roots(params, dirs, mcp_servers)
        if replay:
            params.replay_from = ReplayFromStart()
        session = ClientSession(self._self(), session_id, cwd_s)
        previous = self.sessions.get(session_id)
        if on_update is not None:
            session.add_listener(on_update)
        self._attach(session)  # replayed updates arrive before the response
        try:
            response = await self._request("session/resume", params, ResumeSessionResponse)
        except BaseException:
            self._detach(session)
            if previous is not None:
                self._attach(previous)
            raise
        return self._open(session, response, None)

    def _open(
        self, session: ClientSession, response: Any, on_update: UpdateListener | None
    ) -> ClientSession:
        if on_update is not None:
            session.add_listener(on_update)
        self._attach(session)
        state = session.state
        # SS-25 / D-19: a snapshot that already arrived as an update wins over the response.
        commands, options = response.available_commands, response.config_options
        if AvailableCommandsUpdate not in session._seeded and isinstance(commands, list):
            state.available_commands = list(commands)
        if ConfigOptionUpdate not in session._seeded and isinstance(options, list):
            state.config_options = list(options)
        return session

    async def list_sessions(self, *, cwd: PathLike | None = None) -> list[SessionInfo]:
        """Every session the agent lists (all pages), optionally only those in ``cwd``.

        Only an absent or ``null`` ``nextCursor`` ends pagination (``""`` is a cursor,
        D-20); a cursor seen twice also ends it, so a buggy agent cannot loop forever.
        """
        session_capabilities(self.agent_capabilities)
        params = ListSessionsRequest()
        if cwd is not None:
            params.cwd = check_absolute(os.fspath(cwd))
        found: list[SessionInfo] = []
        seen: set[str] = set()
        while True:
            page = await self._request("session/list", params, ListSessionsResponse)
            found.extend(page.sessions)
            cursor = page.next_cursor
            if not isinstance(cursor, str) or cursor in seen:
                return found
            seen.add(cursor)
            params.cursor = cursor

    async def delete(self, session_id: str) -> None:
        """Delete ``session_id`` (needs ``session.delete``, SS-23); ``-32002`` counts as
        success (D-16). A live session object for it is detached."""
        check_delete(self.agent_capabilities)
        with contextlib.suppress(ResourceNotFound):
            await self._request(
                "session/delete", DeleteSessionRequest(session_id=session_id), DeleteSessionResponse
            )
        live = self.sessions.get(session_id)
        if live is not None:
            self._detach(live)

    async def login(self, method_id: str) -> None:
        """``auth/login`` with an advertised ``agent`` auth method (AU-02, AU-04)."""
        check_auth_method(self.auth_methods, method_id)
        await self._request("auth/login", LoginAuthRequest(method_id=method_id), LoginAuthResponse)

    async def logout(self) -> None:
        """``auth/logout``; only when the agent advertises auth methods (AU-02)."""
        check_auth_method(self.auth_methods, None)
        await self._request("auth/logout", LogoutAuthRequest(), LogoutAuthResponse)

    def _paths(
        self, cwd: PathLike | None, dirs: Sequence[PathLike] | None
    ) -> tuple[str, list[str] | None]:
        session_capabilities(self.agent_capabilities)
        cwd_s = check_absolute(os.fspath(cwd) if cwd is not None else self.default_cwd)
        dir_list = None if dirs is None else [os.fspath(d) for d in dirs]
        check_directories(self.agent_capabilities, dir_list)
        return cwd_s, dir_list


def _fill_roots(params: Any, dirs: list[str] | None, servers: Sequence[Any] | None) -> None:
    if dirs is not None:
        params.additional_directories = dirs
    if servers is not None:
        params.mcp_servers = list(servers)
    elif params.mcp_servers is UNSET:
        params.mcp_servers = []

"""The :class:`ClientConnection`: one initialized connection to an agent.

The public face of the client side: what the agent said in ``initialize``, session
management (new, list, resume, delete) and auth. Every such method refuses locally
(raising :class:`~acp2.errors.LocalProtocolError`, sending nothing) what the agent did not
advertise, and raises the agent's :class:`~acp2.errors.RequestError` on an error answer.
The plumbing -- routing ``session/update`` and permission requests to sessions, and the
agent going away as :class:`~acp2.errors.AgentClosed` with its stderr tail -- is the
:class:`~acp2.client.core.ClientCore` this object and its sessions share.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import msgspec
from msgspec import UNSET

from acp2 import _aio
from acp2.client.checks import (
    check_absolute,
    check_auth_method,
    check_delete,
    check_directories,
    check_mcp_servers,
    session_capabilities,
)
from acp2.client.core import ClientCore
from acp2.client.env import SessionEnv
from acp2.client.permissions import PermissionPolicy
from acp2.client.preview_calls import PreviewCalls
from acp2.client.session import ClientSession, UpdateListener
from acp2.errors import AgentClosed, LocalProtocolError, ResourceNotFound
from acp2.schema import (
    AgentCapabilities,
    DeleteSessionRequest,
    InitializeResponse,
    ListSessionsRequest,
    LoginAuthRequest,
    LogoutAuthRequest,
    NewSessionRequest,
    NewSessionResponse,
    ReplayFromStart,
    ResumeSessionRequest,
    ResumeSessionResponse,
    SessionInfo,
    SystemPrompt,
)
from acp2.schema.extensions import (
    SESSION_ATTACH,
    AttachRole,
    AttachSessionRequest,
    supports_attach,
)
from acp2.schema.methods import (
    AUTH_LOGIN,
    AUTH_LOGOUT,
    SESSION_DELETE,
    SESSION_LIST,
    SESSION_NEW,
    SESSION_RESUME,
    MethodSpec,
)
from acp2.state import SessionState

if TYPE_CHECKING:  # typing only: the client's start-up imports stay as pinned
    from acp2.rpc.link import Link
    from acp2.schema import McpServerAcp

__all__ = ["AgentClosed", "ClientConnection"]

P = TypeVar("P")
R = TypeVar("R")

PathLike = str | os.PathLike[str]


class ClientConnection(PreviewCalls):
    """An initialized connection to an agent; create it with :func:`acp2.client.connect`
    or :func:`acp2.client.connect_transport`.

    Read-only attributes: ``agent_info`` (:class:`~acp2.schema.Implementation`),
    ``agent_capabilities`` (:class:`~acp2.schema.AgentCapabilities`; test markers with
    :func:`acp2.schema.supports`), ``auth_methods``, ``protocol_version``, ``sessions``
    (live :class:`ClientSession` objects by id), ``closed``, ``connection`` (the
    JSON-RPC :class:`~acp2.rpc.Connection`), ``permission_policy``, ``default_cwd``,
    ``remote`` (the remote transport under a :func:`~acp2.client.connect_url` client, for
    its link state; ``None`` otherwise).
    """

    def __init__(
        self,
        link: ClientCore[ClientSession],
        response: InitializeResponse,
        *,
        permissions: PermissionPolicy,
        default_cwd: str,
    ) -> None:
        #: What the sessions of this connection read of it (they hold no pointer to it).
        self.env = SessionEnv(response.capabilities, permissions)
        self.default_cwd = default_cwd
        self.protocol_version = response.protocol_version
        self.agent_info = response.info
        methods = response.auth_methods
        self.auth_methods: list[Any] = list(methods) if isinstance(methods, list) else []
        self._link = link
        self.remote: Any = None
        #: MCP servers sent with every new session and resume that names none itself
        #: (see :meth:`use_mcp_servers`).
        self.mcp_servers: list[Any] = []

    @property
    def agent_capabilities(self) -> AgentCapabilities:
        """The capabilities the agent answered ``initialize`` with."""
        return self.env.agent_capabilities

    @agent_capabilities.setter
    def agent_capabilities(self, value: AgentCapabilities) -> None:
        self.env.agent_capabilities = value

    @property
    def permission_policy(self) -> PermissionPolicy:
        """How this connection's sessions answer permission requests (settable)."""
        return self.env.permission_policy

    @permission_policy.setter
    def permission_policy(self, value: PermissionPolicy) -> None:
        self.env.permission_policy = value

    # -- the connection ---------------------------------------------------------------------

    @property
    def connection(self) -> Link:
        """The link to the agent underneath (for extension handlers, diagnostics): a
        :class:`~acp2.rpc.Connection`, or the back bridge's in-process end for a v1 agent."""
        return self._link.connection

    @property
    def sessions(self) -> dict[str, ClientSession]:
        """The live sessions by id (read-only for callers)."""
        return self._link.sessions

    @property
    def closed(self) -> bool:
        """True once the connection is closing or closed."""
        return self._link.closed

    def stderr_tail(self) -> str:
        """The last lines the agent process wrote to stderr ("" if unknown)."""
        return self._link.stderr_tail()

    def describe_closed(self) -> str:
        """Explain the closed connection, ending with the last lines of the agent's stderr."""
        return self._link.describe_closed()

    def word_errors(self, reached: str, why_ended: Callable[[], object]) -> None:
        """Errors about this connection's end name the agent as ``reached`` (e.g. "the
        remote agent at URL") and ask ``why_ended`` for the link's reason, instead of
        pointing at a local agent's stderr."""
        self._link.reached = reached
        self._link.why_ended = why_ended

    async def aclose(self) -> None:
        """Close the connection (idempotent); pending calls raise ``ConnectionClosed``."""
        await self._link.aclose()

    async def ext_request(self, method: str, params: Any = None) -> Any:
        """Send the extension request ``method`` (must start with ``_``); return the
        result as plain JSON values. Raises the agent's ``RequestError`` on error."""
        _check_extension(method)
        raw = await self._link.request(method, params, msgspec.Raw)
        return msgspec.json.decode(raw)

    async def ext_notify(self, method: str, params: Any = None) -> None:
        """Send the extension notification ``method`` (must start with ``_``)."""
        _check_extension(method)
        self._link.notify_nowait(method, params)

    def use_mcp_servers(self, servers: Sequence[Any]) -> list[str]:
        """Send ``servers`` with every later ``new_session`` / ``resume`` that gives none,
        keeping only those whose transport the agent advertises; return one warning line
        per server left out (see :mod:`acp2.client.mcp_config`)."""
        from acp2.client.mcp_config import usable_mcp_servers

        hosted = self._hosted(servers) or []
        self.mcp_servers, warnings = usable_mcp_servers(self.agent_capabilities, hosted)
        return warnings

    def host_mcp_server(self, server: Any, name: str | None = None) -> McpServerAcp:
        """Serve ``server`` (an MCP SDK server object: ``MCPServer`` or a low-level
        ``Server``) to the agent through this connection (MCP over ACP); return its
        ``{type:"acp"}`` configuration, to pass in ``mcp_servers``. ``name`` defaults to
        the server's own; the same object keeps one configuration (the first name)."""
        return self._link.mcp_host.offer(server, name)

    def _hosted(self, servers: Sequence[Any] | None) -> list[Any] | None:
        """``servers`` with each MCP SDK server object (MCP over ACP: served by this
        client, :mod:`acp2.client.mcp_host`) replaced by its ``acp`` configuration."""
        if not servers:
            return None if servers is None else []
        return self._link.mcp_host.configs(list(servers))

    # -- sessions ---------------------------------------------------------------------------

    async def new_session(
        self,
        cwd: PathLike | None = None,
        *,
        additional_directories: Sequence[PathLike] | None = None,
        mcp_servers: Sequence[Any] | None = None,
        on_update: UpdateListener | None = None,
        system_prompt: SystemPrompt | None = None,
    ) -> ClientSession:
        """Create a session rooted at the absolute ``cwd`` (default: the connection's cwd).

        ``system_prompt`` (Preview, unstable) is sent only to an agent advertising
        ``session.systemPrompt`` (and its ``override`` mode for an override); otherwise
        ``LocalProtocolError``, nothing sent.

        ``on_update`` is added as a listener before any update is delivered, so it also
        sees updates the agent sent before its response (SS-25). The initial config
        options and commands of the response seed the state unless an update already set
        them (D-19). Raises ``LocalProtocolError`` for a relative path or an unadvertised
        capability (SS-05, SS-06, SS-08), the agent's ``RequestError`` otherwise.
        """
        cwd_s, dirs = self._paths(cwd, additional_directories)
        mcp_servers = self._hosted(mcp_servers)
        if mcp_servers is None and self.mcp_servers:
            mcp_servers = self.mcp_servers
        check_mcp_servers(self.agent_capabilities, mcp_servers)
        params = NewSessionRequest(cwd=cwd_s)
        _fill_roots(params, dirs, mcp_servers)
        if system_prompt is not None:
            from acp2.client.unstable import check_system_prompt

            check_system_prompt(self.agent_capabilities, system_prompt)
            params.system_prompt = system_prompt
        response = await self._link.call(SESSION_NEW, params)
        session = ClientSession(self.env, self._link, response.session_id, cwd_s)
        if on_update is not None:
            session.add_listener(on_update)
        self._link.attach(session)
        return _seeded(session, response)

    async def resume(
        self,
        session_id: str,
        *,
        cwd: PathLike | None = None,
        replay: bool = False,
        additional_directories: Sequence[PathLike] | None = None,
        mcp_servers: Sequence[Any] | None = None,
        on_update: UpdateListener | None = None,
        known: SessionState | None = None,
    ) -> ClientSession:
        """Reattach to ``session_id`` with ``session/resume``; return a fresh session object.

        ``cwd`` must be the session's own cwd (default: the connection's cwd). With
        ``replay``, the agent first replays the whole conversation (``replayFrom:
        {type:"start"}``), reduced into the new state before this returns (SS-12, SS-14).
        A session without a state snapshot is taken to be idle (D-14). Any older object
        for the same id stops receiving updates.

        The replay ends at the agent's ``replay_complete`` or, from an agent that sends
        none, at the response; while the session's listeners see replayed updates,
        ``session.replaying`` is True (it is False for the marker and everything live).
        ``known`` is a state the client already holds for this session (e.g. the
        ``state`` of the object of a dropped connection): the new session takes it over
        as its ``state``, and the replay rebuilds what it holds instead of adding to it
        -- no message, tool call or terminal is doubled, and replayed updates about what
        it held are not handed to the listeners again; a completed replay also drops the
        held messages it did not name (it is all the history the agent retained, and an
        agent may give replayed messages new ids, SS-17). After a failed resume ``known``
        may hold part of the replay (:class:`~acp2.state.ReplayMerge`).
        """
        cwd_s, dirs = self._paths(cwd, additional_directories)
        mcp_servers = self._hosted(mcp_servers)
        if mcp_servers is None and self.mcp_servers:
            mcp_servers = self.mcp_servers
        check_mcp_servers(self.agent_capabilities, mcp_servers)
        params = ResumeSessionRequest(session_id=session_id, cwd=cwd_s)
        _fill_roots(params, dirs, mcp_servers)
        if replay:
            params.replay_from = ReplayFromStart()
        session = ClientSession(self.env, self._link, session_id, cwd_s, state=known)
        if on_update is not None:
            session.add_listener(on_update)
        response = await self._join(session, SESSION_RESUME, params, replay=replay)
        self._link.attach(session)  # again: of concurrent resumes of one id, the last answered wins
        return _seeded(session, response)

    async def attach(
        self,
        session_id: str,
        *,
        role: AttachRole = "observer",
        on_update: UpdateListener | None = None,
    ) -> ClientSession:
        """Attach to a session another client of the same agent is serving, as ``role``:
        ``"observer"`` (watch only: the agent refuses its prompts) or ``"controller"``
        (may prompt, cancel and answer permission requests) -- ``_acp2/session/attach``.

        Before this returns, the session's whole history is replayed into ``state``
        (``replaying`` is True meanwhile) with the agent's state snapshot, so ``state``
        is the live session's; from then on every update arrives live. ``close()``
        detaches; the session goes on for its other clients. Raises
        ``LocalProtocolError`` when the agent does not advertise attaching, and the
        agent's ``-32002`` for a session that is not live there or not this client's to
        watch.
        """
        if not supports_attach(session_capabilities(self.agent_capabilities)):
            raise LocalProtocolError("The agent does not advertise _acp2/session/attach")
        session = ClientSession(self.env, self._link, session_id, "")
        session.role = role
        session.attached = True
        if on_update is not None:
            session.add_listener(on_update)
        params = AttachSessionRequest(session_id=session_id, role=role)
        response = await self._join(session, SESSION_ATTACH, params)
        session.cwd = response.cwd
        session.seed(response.available_commands, response.config_options)
        return session

    async def rejoin(self, session: ClientSession) -> None:
        """Internal (:func:`~acp2.client.connect_url`): resume ``session`` in place after
        the byte stream moved to a new connection -- the same object, its works and
        listeners kept, the replay rebuilding what its state holds instead of doubling it
        (as :meth:`resume` with ``known``). Raises what ``session/resume`` raises.

        A session joined with :meth:`attach` is attached again, with its role, instead:
        resuming it would make an observer one of the session's controllers."""
        if session.attached:
            await self._reattach(session)
            return
        params = ResumeSessionRequest(session_id=session.id, cwd=session.cwd)
        _fill_roots(params, None, None)
        params.replay_from = ReplayFromStart()
        response = await self._replayed(session, SESSION_RESUME, params)
        _seeded(session, response)

    async def _reattach(self, session: ClientSession) -> None:
        """:meth:`rejoin` of an attached ``session``: ``_acp2/session/attach`` again, its
        snapshot rebuilding what ``state`` holds."""
        params = AttachSessionRequest(session_id=session.id, role=session.role)
        response = await self._replayed(session, SESSION_ATTACH, params)
        session.seed(response.available_commands, response.config_options)

    async def _join(
        self, session: ClientSession, spec: MethodSpec[P, R], params: P, *, replay: bool = True
    ) -> R:
        """Make ``session`` the object its id's updates go to, then :meth:`_replayed`; on
        failure the object that held the id before (if any) gets it back."""
        previous = self.sessions.get(session.id)
        self._link.attach(session)  # replayed updates arrive before the response
        try:
            return await self._replayed(session, spec, params, replay=replay)
        except BaseException:
            self._link.detach(session)
            if previous is not None:
                self._link.attach(previous)
            raise

    async def _replayed(
        self, session: ClientSession, spec: MethodSpec[P, R], params: P, *, replay: bool = True
    ) -> R:
        """Send ``spec`` for ``session``, whose answer follows a replay of its history:
        ``session.replaying`` from now until the answer (with ``replay``), the replay
        ended complete on an answer and incomplete on a failure."""
        answered = _aio.new_waiter()
        if replay:
            session.begin_replay(answered)
        try:
            response = await self._link.call(spec, params, waiter=answered)
        except BaseException:
            session.end_replay(complete=False)
            _end_child_replays(session, ok=False)
            raise
        session.end_replay(complete=True)
        _end_child_replays(session, ok=True)
        return response

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
            page = await self._link.call(SESSION_LIST, params)
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
            await self._link.call(SESSION_DELETE, DeleteSessionRequest(session_id=session_id))
        live = self.sessions.get(session_id)
        if live is not None:
            self._link.detach(live)

    # -- auth -------------------------------------------------------------------------------

    async def login(self, method_id: str) -> None:
        """``auth/login`` with an advertised ``agent`` auth method (AU-02, AU-04)."""
        check_auth_method(self.auth_methods, method_id)
        await self._link.call(AUTH_LOGIN, LoginAuthRequest(method_id=method_id))

    async def logout(self) -> None:
        """``auth/logout``; only when the agent advertises auth methods (AU-02)."""
        check_auth_method(self.auth_methods, None)
        await self._link.call(AUTH_LOGOUT, LogoutAuthRequest())

    def _paths(
        self, cwd: PathLike | None, dirs: Sequence[PathLike] | None
    ) -> tuple[str, list[str] | None]:
        session_capabilities(self.agent_capabilities)
        cwd_s = check_absolute(os.fspath(cwd) if cwd is not None else self.default_cwd)
        dir_list = None if dirs is None else [os.fspath(d) for d in dirs]
        check_directories(self.agent_capabilities, dir_list)
        return cwd_s, dir_list


def _seeded(
    session: ClientSession, response: NewSessionResponse | ResumeSessionResponse
) -> ClientSession:
    # SS-25 / D-19: a snapshot that already arrived as an update wins over the response.
    session.seed(response.available_commands, response.config_options)
    return session


def _check_extension(method: str) -> None:
    if not method.startswith("_"):
        raise ValueError(f"extension methods start with '_': {method!r}")


def _fill_roots(
    params: NewSessionRequest | ResumeSessionRequest,
    dirs: list[str] | None,
    servers: Sequence[Any] | None,
) -> None:
    if dirs is not None:
        params.additional_directories = dirs
    if servers is not None:
        params.mcp_servers = list(servers)
    elif params.mcp_servers is UNSET:
        params.mcp_servers = []


def _end_child_replays(session: ClientSession, *, ok: bool) -> None:
    """End the replays of ``session``'s children still waiting for their marker."""
    if session.children:
        # Imported here: a client whose sessions have no children never loads it.
        from acp2.client.children import end_child_replays

        end_child_replays(session, ok=ok)

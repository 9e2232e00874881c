"""Session management on the agent side: new, list, resume (with replay), close, delete,
and config options (SS-01..SS-26, CO-01..CO-09)."""

from __future__ import annotations

import contextlib
import secrets
from typing import TYPE_CHECKING, Any

import anyio

from acp2.agent.bindings import Binding, bind
from acp2.agent.checks import (
    check_mcp,
    check_replay,
    check_roots,
    same_dir,
)
from acp2.agent.children import MAX_CHILDREN, MAX_DEPTH, announcement, lineage, mirrored
from acp2.agent.config import current_options, set_option
from acp2.agent.emitter import Emitter, HeldFrames
from acp2.agent.listing import list_page
from acp2.agent.membership import Membership
from acp2.agent.replay import fold_rows, render
from acp2.agent.runtime import AgentRuntime
from acp2.agent.session import AgentSession, WorkStarter
from acp2.agent.session_hub import AttachQuery, SessionHub, allowed, following, owner_of
from acp2.agent.system_prompt import check_system_prompt
from acp2.agent.system_prompt import keep as keep_system_prompt
from acp2.errors import (
    InvalidParams,
    LocalProtocolError,
    ResourceNotFound,
    SessionInUse,
    StoreUnusable,
)
from acp2.schema import (
    AvailableCommandsUpdate,
    CloseSessionRequest,
    CloseSessionResponse,
    DeleteSessionRequest,
    DeleteSessionResponse,
    ListSessionsRequest,
    ListSessionsResponse,
    NewSessionRequest,
    NewSessionResponse,
    ReplayComplete,
    ResumeSessionRequest,
    ResumeSessionResponse,
    SessionConfigOption,
    SetSessionConfigOptionRequest,
    SetSessionConfigOptionResponse,
)
from acp2.schema.methods import (
    SESSION_CLOSE,
    SESSION_DELETE,
    SESSION_LIST,
    SESSION_NEW,
    SESSION_RESUME,
    SESSION_SET_CONFIG_OPTION,
)
from acp2.state import SessionState

if TYPE_CHECKING:
    from collections.abc import Callable

    from anyio.abc import TaskGroup

    from acp2.agent.mcp import McpOptions
    from acp2.agent.mcp.over_acp import AcpMcpLink
    from acp2.agent.settings import AgentSettings as Agent
    from acp2.rpc.link import Link
    from acp2.schema import ClientCapabilities
    from acp2.schema.extensions import AttachRole
    from acp2.store.sqlite import SessionRecord

__all__ = ["PAGE_SIZE", "SessionManager"]

#: Sessions per ``session/list`` page unless ``Agent.list_page_size`` says otherwise.
PAGE_SIZE = 50


class SessionManager(Membership):
    """The sessions live on one connection, and the session-management handlers.

    ``runtime`` is the Agent's state shared across connections (history store, session
    data, the hub of each live session); ``start_work`` starts agent-initiated work on
    this connection (given to each session it opens); ``principal`` is who the server
    says this connection is (:mod:`acp2.agent.session_hub`), ``capabilities`` returns what its
    client advertised.
    """

    def __init__(
        self,
        agent: Agent,
        runtime: AgentRuntime,
        connection: Link,
        task_group: TaskGroup,
        *,
        start_work: WorkStarter,
        principal: object = None,
        capabilities: Callable[[], ClientCapabilities | None] = lambda: None,
    ) -> None:
        self.agent = agent
        self.runtime = runtime
        self.store = runtime.store
        self.connection = connection
        self.task_group = task_group
        self._start_work = start_work
        self.principal = principal
        #: ``principal`` as the store records it on the sessions this connection creates.
        self.owner = owner_of(principal)
        self.capabilities = capabilities
        self._live: dict[str, AgentSession] = {}
        #: The MCP-over-ACP connections of this connection (None unless the agent offers it).
        self.mcp_acp = _mcp_acp(agent, connection)

    def bindings(self) -> list[Binding]:
        """The session-management handlers, each with its method table entry (the caller
        adds the initialize / auth gates)."""
        bindings = [
            bind(SESSION_NEW, self.on_new),
            bind(SESSION_LIST, self.on_list),
            bind(SESSION_RESUME, self.on_resume),
            bind(SESSION_CLOSE, self.on_close),
        ]
        if self.agent.delete:
            bindings.append(bind(SESSION_DELETE, self.on_delete))
        bindings.append(bind(SESSION_SET_CONFIG_OPTION, self.on_set_config))
        return bindings

    def own_record(self, session_id: str) -> SessionRecord | None:
        """The stored record of ``session_id`` if this connection's principal created
        it (None for an unknown session and for another principal's alike)."""
        return self._own_record(session_id)

    def open_forked(
        self, session_id: str, cwd: str, dirs: list[str], mcp: list[Any]
    ) -> AgentSession:
        """Open a session just forked into the store (leased already) on this
        connection, owned by its principal, and announce its commands."""
        session = self._open(session_id, cwd, dirs, mcp, self.owner)
        self._announce_commands(session)
        return session

    def start(self) -> None:
        """Start the bookkeeping task that gives up the leases when the connection ends."""
        self.task_group.start_soon(self._release_at_end)

    async def _release_at_end(self) -> None:
        """When the connection ends, leave its sessions (see :meth:`leave_all`)."""
        try:
            await self.connection.wait_closed()
        finally:
            self.leave_connection()

    def leave_connection(self) -> None:
        """The connection ended: tell the owners of background work nobody else watches
        that it is cancelled, then leave every session (:meth:`leave_all`; idempotent)."""
        for session in list(self._live.values()):
            hub = self.hub(session)
            if hub is None or len(hub.members) <= 1:
                session.background.abandon()
        self.leave_all()

    # -- lookups ----------------------------------------------------------------------

    def find(self, session_id: str) -> AgentSession | None:
        """The live session with this id on this connection, or None."""
        return self._live.get(session_id)

    def live(self, session_id: str) -> AgentSession:
        """The live session with this id, for a client's change (prompt, config); raises
        -32002 with ``data.sessionId`` (SS-26), ``-32602`` for a child session (the client
        may not change a child)."""
        session = self._live.get(session_id)
        if session is None:
            raise ResourceNotFound(f"Unknown session: {session_id}", {"sessionId": session_id})
        if session.parent is not None:
            raise InvalidParams(f"{session_id} is a child session: the client may not change it")
        return session

    def all(self) -> list[AgentSession]:
        """Every live session on this connection."""
        return list(self._live.values())

    # -- new / resume -------------------------------------------------------------------

    async def on_new(self, params: NewSessionRequest) -> NewSessionResponse:
        """Create a session rooted at an absolute ``cwd`` (SS-02..SS-05, SS-09)."""
        dirs = check_roots(self.agent, params.cwd, params.additional_directories)
        mcp = check_mcp(self.agent, params.mcp_servers)
        system = check_system_prompt(self.agent, params.system_prompt)
        session_id = f"sess_{secrets.token_hex(12)}"
        await self._create(session_id, params.cwd, dirs)
        if self.connection.closed:
            # The client closed its side during the commit: it is answered, as a request
            # that never waited would have been, and the session is left at once.
            self.store.release(session_id)
            return NewSessionResponse(session_id=session_id)
        session = self._open(session_id, params.cwd, dirs, mcp, self.owner)
        keep_system_prompt(session, system)
        response = NewSessionResponse(session_id=session_id)
        self._fill_session_response(session, response)
        if self.agent.on_session_start is not None:
            try:
                await self.agent.on_session_start(session)
            except BaseException:
                # The client gets an error, so there is no session: leave no trace of it.
                self._leave(session_id)
                self.store.delete_session(session_id)
                raise
        self._announce_commands(session)
        return response

    async def _create(self, session_id: str, cwd: str, dirs: list[str]) -> None:
        """Store a new session and hold it. A store that queues it (``open_session``)
        commits it with the other ``session/new`` of this loop pass
        (:mod:`acp2.agent.group_commit`) before this returns; if that fails, nothing of
        it is written. The wait (one pass) is shielded: a request read just before the
        client closed its side is still answered, as one that never waited."""
        opener = getattr(self.store, "open_session", None)
        if opener is None:  # a store of the author's own making
            self.store.create_session(session_id, cwd, dirs, self.owner)
            self.store.acquire(session_id)
            return
        opener(session_id, cwd, dirs, self.owner)
        try:
            with anyio.CancelScope(shield=True):
                await self.runtime.commits.wait()
        except BaseException:
            self._unmake(session_id, getattr(self.store, "discard_open", None))
            raise

    def _unmake(self, session_id: str, discard: Callable[[str], bool] | None) -> None:
        """Undo :meth:`_create` of a session whose ``session/new`` fails."""
        if discard is not None and discard(session_id):  # never written
            return
        with contextlib.suppress(StoreUnusable):  # committed already: delete it again
            self.store.release(session_id)
            self.store.delete_session(session_id)

    async def on_resume(self, params: ResumeSessionRequest) -> ResumeSessionResponse:
        """Reattach a stored session; replay its history first when asked (SS-10..SS-16).

        Everything goes before the response, in this order: the replay and its
        ``replay_complete`` (only with a ``replayFrom`` cursor), the ``state_update``
        snapshot, ``available_commands_update``.

        A session another live agent process serves is refused (``-32010``, see
        :mod:`acp2.store.sqlite_lease`). The history is folded a batch at a time, letting the
        connection's other requests be answered meanwhile. Another principal's session
        gets the answer an unknown one gets (``-32002``), before anything else is checked.
        """
        record = self._own_record(params.session_id)
        if record is None:
            raise ResourceNotFound(
                f"Unknown session: {params.session_id}", {"sessionId": params.session_id}
            )
        if not same_dir(params.cwd, record.cwd):
            raise InvalidParams(f"cwd must be the session's own cwd: {record.cwd}")
        replay = check_replay(params.replay_from)
        dirs = check_roots(self.agent, params.cwd, params.additional_directories)
        mcp = check_mcp(self.agent, params.mcp_servers)
        system = check_system_prompt(self.agent, params.system_prompt)
        session = await self._reattach(record, replay, dirs, mcp)
        keep_system_prompt(session, system)
        to_client = self.to_client(session)
        to_client.emit(session.snapshot())
        response = ResumeSessionResponse()
        self._fill_session_response(session, response)
        # Everything the resume owes goes before its response (acp-tck RESUME-202).
        self.send_commands(session, to_client)
        return response

    async def _reattach(
        self, record: SessionRecord, replay: bool, dirs: list[str], mcp: list[Any]
    ) -> AgentSession:
        """The live session for ``record`` (opened unless this connection serves it),
        its history replayed first when asked."""
        live = self._live.get(record.id)
        elsewhere = self.runtime.hubs.get(record.id) if live is None else None
        if elsewhere is not None:
            # Live on another connection of this Agent: join it as a controller.
            query = AttachQuery(record.id, "controller", self.owner, elsewhere.owner)
            if not await allowed(self.agent.may_attach, query, self.agent.observers):
                raise SessionInUse(
                    "The session is in use by another client", {"sessionId": record.id}
                )
            return await self.join(elsewhere, "controller", replay)
        held: list[Emitter] = []
        if live is not None and replay:
            # Live updates wait behind the replay (RFD session-replay-complete). The fold
            # reads the history as stored now, with no await in between, so every live
            # update is either in the replay or held: never both, never lost.
            live.emitter.hold()
        try:
            state = await self._attach(record.id, replay)
            session = self._live.get(record.id)
            if session is None:
                session = self._open(record.id, record.cwd, dirs, mcp, record.principal)
            else:
                session.additional_directories, session.mcp_servers = dirs, mcp
                if mcp_servers_of(session, self.agent.mcp_options, self.mcp_acp):
                    session.mcp.replace(mcp, session.roots)
            self.store.update_session(record.id, additional_directories=dirs)
            if state is not None:
                await self._replay(session, state, held)
        finally:
            for emitter in held:
                emitter.release()
            if live is not None and replay:
                live.emitter.release()
        return session

    async def _attach(self, session_id: str, replay: bool) -> SessionState | None:
        """Take the lease unless this connection serves the session already; return the
        folded history when replaying (else None)."""
        fresh = session_id not in self._live
        if fresh:
            self.store.acquire(session_id)
        try:
            state = await self._fold(session_id) if replay else None
        except BaseException:
            if fresh:
                self.store.release(session_id)
            raise
        if fresh and session_id in self._live:  # a concurrent resume on this connection won
            self.store.release(session_id)
        return state

    async def _fold(self, session_id: str) -> SessionState:
        """The session's stored history folded into a SessionState (acp2.agent.replay)."""
        batches = self.store.row_batches(session_id)
        try:
            return await fold_rows(batches, threaded=self.store.on_disk)
        finally:
            batches.close()

    async def _replay(
        self,
        session: AgentSession,
        state: SessionState,
        held: list[Emitter] | None = None,
        catch_up: Callable[[AgentSession], None] | None = None,
    ) -> None:
        """Send the folded history, frame by frame, under the connection's backpressure,
        then its ``replay_complete``; the same for each stored child (Preview subagents,
        :func:`acp2.agent.children.replayed`), before the parent's marker.

        The replay boundary (RFD session-replay-complete) goes after the last replayed
        update, before the state snapshot and the response. Both drafts take it as their
        ``other`` fallback, so it is sent to every client that asked for a replay. The
        frames bypass the session's emitter, which may be holding live updates meanwhile.
        With ``held``, a live child's emitter is held too, right before its history is
        read (no await between), and added to ``held`` for the caller to release; with
        ``catch_up``, it is called with each live child at that same point (an attaching
        client starts following the child there, :meth:`join`).
        """
        live = {child.id: child for child in lineage(session) if child is not session}
        await self._replay_tree(session, session.id, state, live, held, catch_up)

    async def _replay_tree(
        self,
        root: AgentSession,
        session_id: str,
        state: SessionState,
        live: dict[str, AgentSession],
        held: list[Emitter] | None,
        catch_up: Callable[[AgentSession], None] | None = None,
        depth: int = 0,
    ) -> bool:
        """:meth:`_replay` of ``session_id`` and its stored children; False when ``root``
        closed meanwhile (then no marker: the replay is truncated)."""
        connection = self.connection
        emitter = Emitter(session_id, connection, None)
        for update in render(state, live):
            if root.closed:
                return False
            emitter.emit(update, record=False)
            if connection.congested:
                await connection.drain()
        if depth < MAX_DEPTH:
            for child_id in state.subagents:
                if self.store.get_session(child_id) is None:
                    continue  # deleted meanwhile: its announcement says all there is
                _before_read(live.get(child_id), held, catch_up)
                child_state = await self._fold(child_id)
                deeper = depth + 1
                if not await self._replay_tree(
                    root, child_id, child_state, live, held, catch_up, deeper
                ):
                    return False
        if root.closed:
            return False
        emitter.emit(ReplayComplete(), record=False)
        return True

    def _own_record(self, session_id: str) -> SessionRecord | None:
        """The stored record of ``session_id`` if this connection's principal created
        it; None for an unknown session and for another principal's alike."""
        record = self.store.get_session(session_id)
        return record if record is not None and record.principal == self.owner else None

    def _open(
        self, session_id: str, cwd: str, dirs: list[str], mcp: list[Any], owner: str | None
    ) -> AgentSession:
        emitter = Emitter(session_id, self.connection, self.store)
        shared = self.runtime.shared(session_id)
        session = AgentSession(
            session_id,
            cwd,
            dirs,
            mcp,
            emitter,
            shared=shared,
            start_work=self._start_work,
            spawn=self.task_group.start_soon,
            spawn_child=self._spawn_child,
        )
        self._live[session_id] = session
        self.host(session, owner)
        if mcp_servers_of(session, self.agent.mcp_options, self.mcp_acp):
            session.mcp.start()  # the servers connect while the client gets its answer
        return session

    async def join(self, hub: SessionHub, role: AttachRole, replay: bool) -> AgentSession:
        """Attach this connection to the live session of ``hub`` as ``role``; with
        ``replay``, first send it the history (then ``replay_complete``) while its live
        frames wait, so each update reaches it once: in the replay or after the marker."""
        session = hub.session
        member = self.member(role, HeldFrames(self.connection) if replay else self.connection)
        self.store.acquire(session.id)  # one more hold of this process's lease
        self._live[session.id] = session
        hub.join(member)
        try:
            if replay:
                # No await between the hold (join) and reading the history (_fold); the
                # same for each live child (catch_up), whose frames share the held sink.
                state = await self._fold(session.id)
                await self._replay(
                    session, state, catch_up=following(hub, member, self.runtime.hubs)
                )
        finally:
            hub.extend_all(member)  # children not replayed: live from now on
            hub.release(member, self.connection)
        return session

    async def _spawn_child(
        self, parent: AgentSession, title: str | None, description: str | None, cancellable: bool
    ) -> AgentSession:
        """Create and announce a child of ``parent`` (:mod:`acp2.agent.children`)."""
        if len(parent.children) >= MAX_CHILDREN:
            raise LocalProtocolError(f"a session may spawn at most {MAX_CHILDREN} children")
        if parent.closed or self._live.get(parent.id) is not parent:
            raise LocalProtocolError(f"session {parent.id} is closed")
        child_id = f"sess_{secrets.token_hex(12)}"
        dirs = list(parent.additional_directories)
        hub = self.hub(parent)
        owner = hub.owner if hub is not None else self.owner  # the parent's, whoever prompted
        self.store.create_session(child_id, parent.cwd, dirs, owner)
        self.store.acquire(child_id)
        child = self._open(child_id, parent.cwd, dirs, [], owner)
        kid = self.runtime.hubs.get(child_id)
        if hub is not None and kid is not None:
            hub.adopt(kid)  # every client of the parent gets the child's updates
        child.parent = parent
        child.cancellable = cancellable
        parent.children.append(child)
        await parent.send(announcement(child_id, title, description, cancellable))
        child.mirror = lambda update: parent.emitter.emit(mirrored(child_id, update))
        return child

    def _fill_session_response(
        self, session: AgentSession, response: NewSessionResponse | ResumeSessionResponse
    ) -> None:
        options = self.current_options(session)
        if options is not None:
            response.config_options = options
        if self.agent.commands:
            response.available_commands = list(self.agent.commands)

    def send_commands(self, session: AgentSession, to: Emitter | None = None) -> None:
        """Send the commands snapshot with ``to`` (default: the session's emitter)."""
        # D-19: Aug clients only read the update, so it is sent besides the response's list.
        if self.agent.commands:
            commands = list(self.agent.commands)
            (to or session.emitter).emit(AvailableCommandsUpdate(available_commands=commands))

    def _announce_commands(self, session: AgentSession) -> None:
        # session/new: the client learns the session id from the response, so the update
        # follows it (a client that buffered early updates would take it either way, SS-25).
        if self.agent.commands:

            async def announce() -> None:
                """Send the commands (started after the response is queued)."""
                self.send_commands(session)

            self.task_group.start_soon(announce)

    # -- list -----------------------------------------------------------------------------

    async def on_list(self, params: ListSessionsRequest) -> ListSessionsResponse:
        """One page of this principal's stored sessions, optionally filtered by exact
        ``cwd`` (SS-18, SS-19)."""
        return list_page(self.agent, self.store, params, self.owner)

    # -- close / delete -------------------------------------------------------------------

    async def on_close(self, params: CloseSessionRequest) -> CloseSessionResponse:
        """Cancel the work, end it idle ``cancelled``, answer, then go silent (SS-22, D-16).

        An unknown or already closed session succeeds (Nov); a child session is refused
        (``-32602``: it ends with its parent).
        """
        await self.on_close_checked(params.session_id)
        await self.close(params.session_id)
        return CloseSessionResponse()

    async def on_close_checked(self, session_id: str) -> None:
        """``session/close`` / ``session/delete`` from the client: refused for a child."""
        session = self._live.get(session_id)
        if session is not None and session.parent is not None:
            raise InvalidParams(f"{session_id} is a child session: close its parent instead")

    async def close(self, session_id: str) -> None:
        """Close a live session and its children: cancel the work, wait for its idle,
        stop its background work (D-16: final statuses, then a snapshot without them),
        stop sending for it."""
        session = self._live.get(session_id)
        if session is None:
            return
        hub = self.hub(session)
        if hub is not None and len(hub.members) > 1:
            self._leave(session_id)  # the others go on watching: this client detaches
            return
        for child in list(session.children):
            await self.close(child.id)
        session.begin_close()
        await session.wait_idle()
        await session.background.stop()
        session.mark_closed()
        if self._live.get(session_id) is session:
            self._leave(session_id)

    async def on_delete(self, params: DeleteSessionRequest) -> DeleteSessionResponse:
        """Delete a session and its history; unknown ids succeed silently (SS-23); a
        child session is refused (``-32602``).

        A session another client of this Agent holds is refused (``-32010``): its
        history is theirs too. Another principal's session is answered as an unknown one
        (success) and left as it is.
        """
        await self.on_close_checked(params.session_id)
        if self._own_record(params.session_id) is None:
            return DeleteSessionResponse()  # unknown, or not this principal's: nothing to do
        hub = self.runtime.hubs.get(params.session_id)
        if hub is not None and any(m.connection is not self.connection for m in hub.members):
            raise SessionInUse(
                "Other clients are attached to the session", {"sessionId": params.session_id}
            )
        await self.close(params.session_id)
        self.store.delete_session(params.session_id)
        self.runtime.forget(params.session_id)
        return DeleteSessionResponse()

    # -- config options -----------------------------------------------------------------

    def current_options(self, session: AgentSession) -> list[SessionConfigOption] | None:
        """The session's config options with their current values (None: it has none)."""
        return current_options(self.agent, session)

    async def on_set_config(
        self, params: SetSessionConfigOptionRequest
    ) -> SetSessionConfigOptionResponse:
        """Change one option; reject unknown ids and invalid values unchanged (CO-06, CO-09)."""
        session = self.live(params.session_id)
        self.require_controller(session.id, "change its config options")
        options = set_option(self.agent, session, params)
        if self.agent.on_config_change is not None:
            await self.agent.on_config_change(session, params.config_id, params.value)
        return SetSessionConfigOptionResponse(config_options=options)


def mcp_servers_of(
    session: AgentSession, options: McpOptions | None, acp: AcpMcpLink | None = None
) -> bool:
    """True when ``session`` has MCP servers to run, or had some running (a resume may
    take them away); the agent's ``options`` and the connection's MCP-over-ACP ``acp``
    are applied first. A session without any never makes its MCP hub (a few hundred
    bytes each, on every session)."""
    if not session.has_mcp:
        return False
    if options is not None:
        session.mcp.options = options
    session.mcp.acp = acp
    return True


def _mcp_acp(agent: Agent, connection: Link) -> AcpMcpLink | None:
    if not agent.mcp_acp:
        return None
    from acp2.agent.mcp.over_acp import AcpMcpLink  # only for an agent that offers it

    return AcpMcpLink(connection)


def _before_read(
    child: AgentSession | None,
    held: list[Emitter] | None,
    catch_up: Callable[[AgentSession], None] | None,
) -> None:
    """What :meth:`SessionManager._replay_tree` does to a live child right before its
    history is read (no await between): hold its emitter (a resume), let an attaching
    client follow it (``catch_up``)."""
    if child is None:
        return
    if held is not None:
        child.emitter.hold()
        held.append(child.emitter)
    if catch_up is not None:
        catch_up(child)

"""Several clients on one live session: the :class:`SessionHub` and who may attach.

Every session an Agent serves has one hub (kept by :mod:`acp2.agent.runtime`) listing the
connections attached to it: the one that created or resumed it, and any that attached
with ``_acp2/session/attach`` (:mod:`acp2.schema.extensions`), each as ``controller``
(prompt, cancel, answer) or ``observer`` (watch only). All of them share one
:class:`~acp2.agent.session.AgentSession` -- one prompt queue, one foreground state, one
history -- and its emitter writes to all of them (:mod:`acp2.agent.fanout`).

* Permission and elicitation requests go to every controller; the first explicit answer
  wins and the others are withdrawn (:mod:`acp2.agent.race`).
* A client that leaves (``session/close``, or its connection ends) is detached; the
  session and its running work go on while any client holds it. The work runs in a task
  of the connection that started it, so when that connection ends while others remain,
  the work is shielded from that connection's shutdown (it spares the task) and the
  connection waits for it (:meth:`SessionHub.leave`). When the last client leaves, the work is
  cancelled, as a session with one client always was.
* A live child session's hub follows its parent's (:meth:`SessionHub.adopt`): every client
  attached to the parent also receives the child's own updates and is asked the child's
  permission and elicitation requests; one that attaches later joins each child right
  before that child's history is read for its replay (:meth:`SessionHub.extend`), and
  one that leaves the parent leaves its children.
* Each attached connection holds the session's lease once (:mod:`acp2.store.sqlite_lease`
  counts holds per process), so it is released with the last.

Who may attach is the Agent's ``may_attach`` hook (:class:`AttachQuery`); by default a
connection may attach only to a session created by the same *principal* (the value the
server gives each connection, e.g. from its bearer token; every stdio or in-memory
connection has the principal None, the local user), or as an observer when the Agent's
``observers`` lists it for the session's owner (:func:`owner_or_granted`). Each session
records its principal in the store (:func:`owner_of`), so the binding survives restarts
and other processes sharing the store.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
from collections.abc import Awaitable, Callable, Collection, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import msgspec
from msgspec import UNSET

from acp2.agent.elicit import advertises
from acp2.agent.emitter import GONE
from acp2.agent.fanout import Fanout
from acp2.agent.race import Question
from acp2.errors import ConnectionClosed
from acp2.schema import ElicitationCapabilities
from acp2.schema.extensions import AttachRole

if TYPE_CHECKING:
    from acp2.agent.emitter import FrameSink, HeldFrames
    from acp2.agent.session import AgentSession
    from acp2.rpc.link import Link
    from acp2.schema import ClientCapabilities
    from acp2.schema.methods import MethodSpec

__all__ = [
    "AttachPolicy",
    "AttachQuery",
    "Member",
    "SessionHub",
    "allowed",
    "following",
    "owner_of",
    "owner_or_granted",
    "same_principal",
    "with_modes",
]

R = TypeVar("R")

log = logging.getLogger(__name__)


def owner_of(principal: object) -> str | None:
    """``principal`` as a session records it: None (the local user) stays None, a
    string is itself, anything else its ``str()``."""
    if principal is None or isinstance(principal, str):
        return principal
    return str(principal)


@dataclass(frozen=True, slots=True)
class AttachQuery:
    """What ``may_attach`` is asked: may a connection of ``principal`` attach to
    ``session_id`` as ``role``? ``owner`` is the principal that created the session;
    both as :func:`owner_of` gives them."""

    session_id: str
    role: AttachRole
    principal: str | None
    owner: str | None


#: The Agent's ``may_attach`` hook: True to allow (sync or async).
AttachPolicy = Callable[[AttachQuery], bool | Awaitable[bool]]


def same_principal(query: AttachQuery) -> bool:
    """Only a connection of the session owner's principal."""
    return query.principal == query.owner


def owner_or_granted(observers: Mapping[str, Collection[str]], query: AttachQuery) -> bool:
    """The default ``may_attach``: the session owner's principal, or an observer that
    ``observers`` (owner principal to the principals that may watch its sessions) lists
    for the owner. Nobody else, and never as a controller."""
    if same_principal(query):
        return True
    if query.role != "observer" or query.owner is None or query.principal is None:
        return False
    return query.principal in observers.get(query.owner, ())


async def allowed(
    policy: AttachPolicy | None,
    query: AttachQuery,
    observers: Mapping[str, Collection[str]] | None = None,
) -> bool:
    """Ask ``policy`` (the Agent's ``may_attach``; when None, :func:`owner_or_granted`
    with the Agent's ``observers``); anything but ``True`` refuses."""
    verdict = policy(query) if policy is not None else owner_or_granted(observers or {}, query)
    if inspect.isawaitable(verdict):
        verdict = await verdict
    return verdict is True


def with_modes(
    base: ClientCapabilities | None, every: list[ClientCapabilities | None]
) -> ClientCapabilities | None:
    """``base`` advertising each elicitation mode any of ``every`` advertises."""
    form = next((m for m in every if advertises(m, "form")), None)
    url = next((m for m in every if advertises(m, "url")), None)
    if base is None or (
        (advertises(base, "form") or form is None) and (advertises(base, "url") or url is None)
    ):
        return base
    modes = ElicitationCapabilities(
        form=form.elicitation.form if form is not None else UNSET,  # type: ignore[union-attr]
        url=url.elicitation.url if url is not None else UNSET,  # type: ignore[union-attr]
    )
    return msgspec.structs.replace(base, elicitation=modes)


@dataclass(eq=False, slots=True)
class Member:
    """One connection attached to a session. ``sink`` is where its frames go: the
    connection, or a :class:`~acp2.agent.emitter.HeldFrames` while its snapshot is sent."""

    connection: Link
    role: AttachRole
    principal: object
    capabilities: Callable[[], ClientCapabilities | None]
    sink: FrameSink


def following(
    hub: SessionHub, member: Member, hubs: Mapping[str, SessionHub]
) -> Callable[[AgentSession], None]:
    """The ``catch_up`` of an attach's replay: attach ``member`` (joining ``hub``) to a
    live child's hub (in ``hubs``, the runtime's), called right before the child's
    history is read, so each of its updates reaches the client once."""

    def catch_up(child: AgentSession) -> None:
        kid = hubs.get(child.id)
        if kid is not None:
            hub.extend(member, kid)

    return catch_up


class SessionHub:
    """The connections attached to one live session, and what they share."""

    def __init__(self, session: AgentSession, owner: str | None) -> None:
        self.session = session
        self.owner = owner
        self.members: list[Member] = []
        # A dict as an ordered set: 64 bytes empty against a set's 216, on every session.
        self._questions: dict[Question[Any], None] = {}
        #: The connection that started the current work, and the work's task: spared by
        #: that connection's end once :meth:`leave` shielded it (``_shielded``).
        self._host: Link | None = None
        self._task: asyncio.Task[Any] | None = None
        self._shielded = False
        #: The hubs of the session's children (a shared empty tuple until one is spawned).
        self.kids: tuple[SessionHub, ...] = ()

    # -- membership -------------------------------------------------------------------

    def member(self, connection: Link) -> Member | None:
        """The membership of ``connection``, or None (a loop: asked on every prompt)."""
        for member in self.members:
            if member.connection is connection:
                return member
        return None

    def join(self, member: Member) -> None:
        """Attach ``member``; a controller is also asked every question still open."""
        self.members.append(member)
        self._retarget()
        if member.role == "controller":
            for question in list(self._questions):
                question.ask(member.connection)

    def release(self, member: Member, sink: FrameSink) -> None:
        """Send ``member``'s kept frames and write to ``sink`` (its connection) from now on."""
        held = member.sink
        member.sink = sink
        self._retarget()
        for kid in self.descendants():
            joined = kid.member(member.connection)
            if joined is not None and joined.sink is held:
                joined.sink = sink
                kid._retarget()
        if held is not sink:
            held_frames: HeldFrames = held  # type: ignore[assignment]
            held_frames.sink = sink
            held_frames.flush()

    def leave(self, connection: Link) -> bool:
        """Detach ``connection``; True when nobody holds the session any more.

        Work this connection's task group runs goes on for the others: its scope is
        shielded from this connection's shutdown. After the last client, work running
        elsewhere is cancelled (it ends idle ``cancelled``, seen by nobody).
        """
        self.members = [m for m in self.members if m.connection is not connection]
        self._retarget()
        for kid in self.kids:
            kid.leave(connection)  # its children's updates stop with the parent's
        if self.members:
            if self._host is connection and self._task is not None:
                self._shielded = True
            return False
        if self._host is not connection:
            self.session.cancel()
        return True

    # -- children (Preview subagents) -----------------------------------------------------

    def adopt(self, kid: SessionHub) -> None:
        """Make ``kid`` (the hub of a child just spawned, before it emits anything) follow
        this one: every client attached here joins it with the same role and sink, and
        leaves it when it leaves here."""
        self.kids += (kid,)
        for member in self.members:
            self.extend(member, kid)

    def extend(self, member: Member, kid: SessionHub) -> None:
        """Attach ``member``'s client (a member of this hub) to ``kid`` too, writing to
        the same sink (so a replay's held frames keep their order across sessions); no-op
        when it is attached there already."""
        if kid.member(member.connection) is None:
            kid.join(
                Member(
                    member.connection,
                    member.role,
                    member.principal,
                    member.capabilities,
                    member.sink,
                )
            )

    def extend_all(self, member: Member) -> None:
        """:meth:`extend` ``member`` to every live descendant not yet joined."""
        for kid in self.descendants():
            self.extend(member, kid)

    def descendants(self) -> Iterator[SessionHub]:
        """The hubs of every live descendant session, parents before their children."""
        for kid in self.kids:
            if not kid.session.closed:
                yield kid
                yield from kid.descendants()

    def _retarget(self) -> None:
        sinks = [m.sink for m in self.members]
        if len(sinks) == 1:
            self.session.emitter.retarget(sinks[0])  # one client: no fan-out on the hot path
        else:
            self.session.emitter.retarget(Fanout(sinks, self) if sinks else GONE)

    # -- slow listeners (acp2.agent.fanout) -----------------------------------------------

    def lead(self) -> FrameSink | None:
        """The sink the session's output waits for: the client whose turn is running,
        else the first attached (the one that opened the session)."""
        chosen = self.member(self._host) if self._host is not None else None
        chosen = chosen or (self.members[0] if self.members else None)
        return chosen.sink if chosen is not None else None

    def overflowed(self, sink: FrameSink) -> None:
        """Drop the client behind ``sink``: it left more than its connection's high-water
        mark of this session's output unread. Its connection is closed with a logged
        reason (what it had not read is gone; it may resume or attach again and catch up
        from history), so the others never wait for it."""
        member = next((m for m in self.members if m.sink is sink), None)
        if member is None or member.connection.closed:
            return
        reason = f"dropped: too slow a reader of session {self.session.id}"
        log.warning("%s: %s", member.connection.name, reason)
        member.connection.abandon(reason)

    # -- the current work -----------------------------------------------------------------

    async def host(self, connection: Link, work: Awaitable[None]) -> None:
        """Run ``work`` (a turn started by ``connection``) as the current work, in a task
        of its own that no task group cancels: :meth:`leave` may shield it from that
        connection's end (then :meth:`shielded_work` names it, and the connection spares
        it when it cancels its turns). No cancel scope of its own: nothing but those
        plain cancels reaches the task (one scope fewer per prompt, issue 25)."""
        task = asyncio.current_task()
        self._host, self._task, self._shielded = connection, task, False
        try:
            await work
        finally:
            if self._task is task:
                self._host = self._task = None
                self._shielded = False

    def shielded_work(self, connection: Link) -> asyncio.Task[Any] | None:
        """The task of the work ``connection`` started that :meth:`leave` shielded (the
        other clients still watch it), or None."""
        if self._host is connection and self._shielded:
            return self._task
        return None

    # -- questions to the controllers ---------------------------------------------------

    def controllers(self) -> list[Member]:
        """The attached controllers, in attach order."""
        return [m for m in self.members if m.role == "controller"]

    def capabilities(self, preferred: Link) -> ClientCapabilities | None:
        """The client capabilities a turn started by ``preferred`` goes by: that
        client's while it is an attached controller, else the first controller's -- with
        every elicitation mode some controller advertised (each request goes only to the
        controllers that advertised its mode)."""
        controllers = self.controllers()
        chosen = next((m for m in controllers if m.connection is preferred), None)
        chosen = chosen or (controllers[0] if controllers else None)
        if chosen is None:
            return None
        return with_modes(chosen.capabilities(), [m.capabilities() for m in controllers])

    async def ask(
        self,
        spec: MethodSpec[Any, R],
        params: Any,
        fallback: R,
        fits: Callable[[Member], bool] = lambda member: True,
    ) -> R:
        """Ask every fitting controller, also those that attach while it is open; return
        the first explicit answer (:mod:`acp2.agent.race`). With a single client that is
        simply its answer (its connection closing raises ``ConnectionClosed``).
        """
        controllers = [m for m in self.controllers() if fits(m)]

        def nobody_left() -> bool:
            return all(m.connection.closed for m in self.members)

        def fits_connection(connection: Link) -> bool:
            member = self.member(connection)
            return member is not None and member.role == "controller" and fits(member)

        question = Question(spec, params, fallback, fits_connection, nobody_left)
        self._questions[question] = None
        try:
            return await question.run([m.connection for m in controllers])
        finally:
            self._questions.pop(question, None)

    async def notify_controllers(self, spec: MethodSpec[Any, None], params: Any) -> None:
        """Send the notification ``spec(params)`` to every controller still attached."""
        for member in self.controllers():
            with contextlib.suppress(ConnectionClosed):  # that client is leaving
                await member.connection.notify(spec, params)

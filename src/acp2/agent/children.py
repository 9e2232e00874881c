"""Child sessions on the agent side (Preview subagents): what the parent announces.

A handler spawns a child with :meth:`AgentSession.spawn_child
<acp2.agent.session.AgentSession.spawn_child>`. The connection's session manager creates
it like a new session (history, lease) and the parent sends ``subagent_update`` before
anything bears the child's id (:func:`announcement`). From then on every state the child
reports is mirrored on the parent as another ``subagent_update`` carrying the same
snapshot (:func:`mirrored`). The client may not prompt, close, configure or delete a
child, and may cancel its work only when the announcement said so (``cancellable``).

:func:`delegate` is the whole round most agents want: spawn a child (linked from the
tool call that delegates), hand it the task as a message between sessions, run its work,
and get its report back as a message to the parent. On a resume, a parent's replay
re-announces each child (:func:`replayed`) before anything bearing the child's id; the
children's own histories follow, each ended by its own ``replay_complete``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Protocol, TypeVar

from msgspec import UNSET

from acp2.schema import (
    StateUpdate,
    SubagentCancelCapabilities,
    SubagentCapabilities,
    SubagentState,
    SubagentUpdate,
)

if TYPE_CHECKING:
    from acp2.agent.handles import ToolCallHandle
    from acp2.state import ChildSession

__all__ = [
    "MAX_CHILDREN",
    "MAX_DEPTH",
    "ChildBody",
    "Delegation",
    "Host",
    "announcement",
    "delegate",
    "lineage",
    "mirrored",
    "replayed",
    "revoke_cancel",
]

#: A delegated task's work: gets the child's :class:`~acp2.agent.turn.Turn` and the task
#: text, returns the report. (``Any``: this module and the turn's do not refer to each
#: other.)
ChildBody = Callable[[Any, str], Awaitable[str]]


class Host(Protocol):
    """What delegating needs of a session: an :class:`~acp2.agent.session.AgentSession`
    (named structurally, so that this module and the session's do not refer to each
    other)."""

    cancellable: bool

    @property
    def id(self) -> str:
        """The session id."""

    @property
    def closed(self) -> bool:
        """True once the session is closed."""

    @property
    def last_stop_reason(self) -> str | None:
        """The stop reason of the session's last idle."""

    async def spawn_child(
        self,
        *,
        title: str | None = None,
        description: str | None = None,
        cancellable: bool = False,
        tool_call: ToolCallHandle | None = None,
    ) -> Host:
        """A new announced child of this session."""

    async def send_message(self, to: Any, content: Any) -> Any:
        """Send a message between this session and ``to``."""

    async def start_work(self, handler: Callable[[Any], Awaitable[str | None]]) -> None:
        """Start agent-initiated work in the session."""

    async def wait_idle(self) -> None:
        """Wait until no work runs."""

    def cancel(self) -> bool:
        """Cancel the running work."""

    async def send(self, update: Any) -> None:
        """Send one update of the session."""


class _Tree(Protocol):
    @property
    def children(self) -> Sequence[Any]:
        """The session's children."""


_T = TypeVar("_T", bound=_Tree)

#: The most children one session may spawn.
MAX_CHILDREN: Final = 256
#: How deep a resume replays children of children (a deeper one is announced only).
MAX_DEPTH: Final = 8


def announcement(
    child_id: str, title: str | None, description: str | None, cancellable: bool
) -> SubagentUpdate:
    """The ``subagent_update`` that announces ``child_id`` on its parent."""
    caps = SubagentCapabilities(cancel=SubagentCancelCapabilities()) if cancellable else UNSET
    return SubagentUpdate(
        session_id=child_id,
        title=title if title is not None else UNSET,
        description=description if description is not None else UNSET,
        capabilities=caps,
    )


def mirrored(child_id: str, update: StateUpdate) -> SubagentUpdate:
    """The parent's ``subagent_update`` mirroring the child's state ``update``."""
    state = SubagentState(
        state=update.state,
        stop_reason=update.stop_reason,
        error=update.error,
        background=update.background,
    )
    return SubagentUpdate(session_id=child_id, state=state)


def replayed(entry: ChildSession, live: bool) -> SubagentUpdate:
    """The ``subagent_update`` that re-announces a stored child in its parent's replay:
    the parent's last record of it (title, description, mirrored state, where it ran).
    ``capabilities.cancel`` is kept only for a child still ``live`` on the replaying
    connection: the client cannot cancel a child whose work is gone (``None`` clears
    what it held)."""
    update = SubagentUpdate(session_id=entry.session_id)
    for name in ("title", "description", "state", "cwd", "additional_directories"):
        value = getattr(entry, name)
        if value is not None:
            setattr(update, name, value)
    update.capabilities = entry.capabilities if live and entry.capabilities else None
    if entry.meta is not None:
        update.meta = entry.meta
    return update


def lineage(session: _T) -> Iterator[_T]:
    """``session`` and every live descendant of it, parents before their children."""
    yield session
    for child in session.children:
        yield from lineage(child)


@dataclass(slots=True)
class Delegation:
    """How a delegated task ended: the ``child`` session that ran it (an
    :class:`~acp2.agent.session.AgentSession`), its ``report`` (None when the work did
    not finish: cancelled or failed) and the child's ``stop_reason``."""

    child: Any
    report: str | None
    stop_reason: str | None


async def delegate(
    session: Host,
    task: str,
    body: ChildBody,
    *,
    title: str | None = None,
    description: str | None = None,
    cancellable: bool = True,
    tool_call: ToolCallHandle | None = None,
) -> Delegation:
    """Run ``task`` in a new child of ``session`` and wait for it to end.

    The child is announced (cancellable by the client unless ``cancellable`` is False)
    and named by ``tool_call``'s content; the task goes to it as a message from the
    parent; ``body(child_turn, task)`` runs as the child's work and returns the report,
    which goes back to the parent as a message from the child. Once the child's work
    ended, its ``cancel`` capability is withdrawn (:func:`revoke_cancel`). If the caller
    is cancelled meanwhile, the child's work is cancelled too. Raises what
    :meth:`AgentSession.spawn_child <acp2.agent.session.AgentSession.spawn_child>`
    raises.
    """
    child = await session.spawn_child(
        title=title, description=description, cancellable=cancellable, tool_call=tool_call
    )
    await session.send_message(child, task)
    reports: list[str] = []

    async def work(turn: Any) -> str | None:
        """The child's work: the body, then its report sent to the parent."""
        report = await body(turn, task)
        reports.append(report)
        await child.send_message(session, report)
        return None

    try:
        await child.start_work(work)
        await child.wait_idle()
    except BaseException:
        child.cancel()  # the parent's work ends: its child's does too
        raise
    if child.cancellable:
        await revoke_cancel(session, child)
    return Delegation(child, reports[0] if reports else None, child.last_stop_reason)


async def revoke_cancel(parent: Host, child: Host) -> None:
    """Withdraw ``child``'s ``cancel`` capability (its work is over): a
    ``subagent_update`` with ``capabilities: null``; a later ``session/cancel`` for it is
    ignored."""
    child.cancellable = False
    if not parent.closed:
        await parent.send(SubagentUpdate(session_id=child.id, capabilities=None))

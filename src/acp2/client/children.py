"""Child sessions (Preview subagents): a session the agent's session created and owns.

The agent announces a child with ``subagent_update`` on the parent session before any
message bearing the child's id; the child's own updates, permission requests and
elicitations then arrive under the child's id on the same connection, with no load or
resume. :func:`adopt` (called as the parent reduces the announcement) registers a
:class:`SubagentSession` for the id, so those messages are routed to it and reduced into
its own :class:`~acp2.state.SessionState`; ``parent.children`` lists them, in order.

A child permits no client-initiated mutation unless its capabilities say so: it takes no
prompt, close or config change; ``cancel()`` only when the parent's latest
``subagent_update`` for it advertised ``capabilities.cancel``. Each refusal raises
:class:`~acp2.errors.LocalProtocolError` and sends nothing.

The agent is untrusted: an announcement naming a session this client already holds (its
own, or another live session) is ignored, and at most :data:`MAX_CHILDREN` children are
kept per session (later ones are logged and their messages dropped).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Final

from acp2.client.session import ClientSession
from acp2.errors import LocalProtocolError
from acp2.schema import SubagentUpdate, supports

if TYPE_CHECKING:
    from acp2.client.core import ClientCore
    from acp2.client.work import Work

__all__ = ["MAX_CHILDREN", "SubagentSession", "adopt", "end_child_replays", "release"]

log = logging.getLogger("acp2.client")

#: The most child sessions kept for one session.
MAX_CHILDREN: Final = 256


class SubagentSession(ClientSession):
    """A child session: ``parent`` is the session that announced it; ``entry`` the
    parent's current record of it (:class:`acp2.state.ChildSession`: title, mirrored
    state, capabilities). Its ``state`` is reduced from its own updates."""

    parent: ClientSession

    @property
    def entry(self) -> Any:
        """The parent's record of this child (``parent.state.subagents[id]``)."""
        return self.parent.state.subagents.get(self.id)

    @property
    def may_cancel(self) -> bool:
        """True when the parent's record advertises ``capabilities.cancel``."""
        caps = getattr(self.entry, "capabilities", None)
        return caps is not None and supports(getattr(caps, "cancel", None))

    async def prompt(self, prompt: Any, *, idempotency_key: str | None = None) -> Work:
        """Refused: a client does not prompt a child session."""
        raise LocalProtocolError(f"{self.id} is a child session: the client may not prompt it")

    async def cancel(self, *, wait: bool = True) -> None:
        """``session/cancel`` for the child's current work, when the agent permits it
        (``capabilities.cancel`` in its ``subagent_update``); else ``LocalProtocolError``."""
        if not self.may_cancel:
            raise LocalProtocolError(f"the agent does not let the client cancel {self.id}")
        await super().cancel(wait=wait)

    async def set_config_option(self, config_id: str, value: str | bool) -> None:
        """Refused: a child session permits no client-initiated mutation."""
        raise LocalProtocolError(f"{self.id} is a child session: its options are the agent's")

    async def close(self) -> None:
        """Refused: the association ends with the parent, not by the client."""
        raise LocalProtocolError(f"{self.id} is a child session: close its parent instead")


def adopt(parent: ClientSession, update: SubagentUpdate, link: ClientCore[ClientSession]) -> None:
    """Register the child ``update`` announces on ``parent``'s ``link``, once (later
    updates only patch the parent's record, which the reducer did)."""
    child_id = update.session_id
    children = parent.children
    known = children.get(child_id)
    if known is not None:
        parent.begin_child_replay(known)  # a rejoin: its replay rebuilds, not doubles
        return
    if child_id == parent.id or link.sessions.get(child_id) is not None:
        log.warning(
            "session %s announced %s, a session this client holds: ignored", parent.id, child_id
        )
        return
    if len(children) >= MAX_CHILDREN:
        log.warning(
            "session %s announced more than %d children: %s ignored",
            parent.id,
            MAX_CHILDREN,
            child_id,
        )
        return
    cwd = update.cwd if isinstance(update.cwd, str) else parent.cwd
    child = SubagentSession(parent.env, link, child_id, cwd)
    child.parent = parent
    children[child_id] = child
    link.attach(child)
    # Announced in the parent's replay: the child's own replay follows, ended by its own
    # replay_complete (RFD session-replay-complete) or, failing that, the answer.
    parent.begin_child_replay(child)


def end_child_replays(parent: ClientSession, *, ok: bool) -> None:
    """The resume of ``parent`` was answered (``ok``: successfully): end the replays of
    its children still waiting for their marker -- truncated unless the answer was a
    success from an agent that sends no markers at all."""
    for child in parent.children.values():
        if child.replaying:
            child.end_replay(complete=ok and not child.marker_owed())
        if child.children:
            end_child_replays(child, ok=ok)


def release(parent: ClientSession, exc: BaseException, link: ClientCore[ClientSession]) -> None:
    """Stop routing to ``parent``'s children and fail their waiters with ``exc`` (the
    parent was closed)."""
    for child in parent.children.values():
        link.detach(child)
        child.fail(exc)

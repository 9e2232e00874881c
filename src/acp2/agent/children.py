"""Child sessions on the agent side (Preview subagents): what the parent announces.

A handler spawns a child with :meth:`AgentSession.spawn_child
<acp2.agent.session.AgentSession.spawn_child>`. The connection's session manager creates
it like a new session (history, lease) and the parent sends ``subagent_update`` before
anything bears the child's id (:func:`announcement`). From then on every state the child
reports is mirrored on the parent as another ``subagent_update`` carrying the same
snapshot (:func:`mirrored`). The client may not prompt, close, configure or delete a
child, and may cancel its work only when the announcement said so (``cancellable``).
"""

from __future__ import annotations

from typing import Final

from msgspec import UNSET

from acp2.schema import (
    StateUpdate,
    SubagentCancelCapabilities,
    SubagentCapabilities,
    SubagentState,
    SubagentUpdate,
)

__all__ = ["MAX_CHILDREN", "announcement", "mirrored"]

#: The most children one session may spawn.
MAX_CHILDREN: Final = 256


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

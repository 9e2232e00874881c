"""What one piece of foreground work may use of the runtime: the :class:`TurnContext`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from acp2.agent.emitter import Emitter
    from acp2.agent.permission import PermissionAsker
    from acp2.agent.session import AgentSession

__all__ = ["TurnContext"]


@dataclass(frozen=True, slots=True)
class TurnContext:
    """The narrow view a :class:`~acp2.agent.Turn` has of the runtime.

    ``session`` is the session the work runs in (its lifecycle reports, cancellation state
    and message ids); ``emitter`` sends and records its updates; ``ask_permission`` sends
    ``session/request_permission`` on the connection that serves the session. Nothing
    else of the connection is reachable from a turn.
    """

    session: AgentSession
    emitter: Emitter
    ask_permission: PermissionAsker

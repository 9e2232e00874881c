"""What one piece of foreground work may use of the runtime: the :class:`TurnContext`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from acp2.agent.elicit import Elicitor
    from acp2.agent.emitter import Emitter
    from acp2.agent.permission import PermissionAsker
    from acp2.agent.session import AgentSession
    from acp2.schema import ClientCapabilities

__all__ = ["TurnContext"]


@dataclass(frozen=True, slots=True)
class TurnContext:
    """The narrow view a :class:`~acp2.agent.Turn` has of the runtime.

    ``session`` is the session the work runs in (its lifecycle reports, cancellation state
    and message ids); ``emitter`` sends and records its updates; ``ask_permission`` sends
    ``session/request_permission`` on the connection that serves the session;
    ``elicit`` sends ``elicitation/create`` and ``complete_elicitation`` the
    ``elicitation/complete`` notification on that same connection (EL-03, EL-11), and
    ``client_capabilities`` returns what its client advertised (None before
    ``initialize``). Nothing else of the connection is reachable from a turn.
    """

    session: AgentSession
    emitter: Emitter
    ask_permission: PermissionAsker
    elicit: Elicitor
    complete_elicitation: Callable[[str], Awaitable[None]]
    client_capabilities: Callable[[], ClientCapabilities | None]

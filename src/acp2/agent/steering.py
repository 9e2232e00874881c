"""``_acp2/session/steer``: text for a session's running work (acp2's extension).

Mid-turn input is an open RFD (``session/inject``, agent-client-protocol PR 1261), so acp2
keeps its version behind a ``_`` name (:mod:`acp2.schema.extensions`), advertised only by
an agent with ``Agent.steer`` set, whose prompt handler reads the steering with
:func:`take_steering` at its next step. The handler of the request:

* refuses an unknown session (``-32002``), a child (``-32602``), an observer
  (``-32600``) and content the agent does not accept (``-32602``), changing nothing;
* answers ``idle`` when nothing runs (nothing is kept: the client sends a prompt);
* otherwise records and sends the content as a ``user_message`` (every client sees what
  was said, and a replay shows it), keeps it for the work, and answers ``steered`` with
  that message's id.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from acp2.agent.bindings import Binding, bind
from acp2.agent.capabilities import check_prompt
from acp2.schema import UserMessage
from acp2.schema.extensions import SESSION_STEER, SteerSessionRequest, SteerSessionResponse

if TYPE_CHECKING:
    from acp2.agent.session import AgentSession
    from acp2.agent.sessions import SessionManager

__all__ = ["STEERING_KEY", "bindings", "steer", "take_steering"]

#: Where steering waits for the work in ``session.data``.
STEERING_KEY: Final = "acp2.steering"


def bindings(manager: SessionManager) -> list[Binding]:
    """The handler when the agent takes steering, else none."""
    if not manager.agent.steer:
        return []

    async def on_steer(params: SteerSessionRequest) -> SteerSessionResponse:
        return steer(manager, params)

    return [bind(SESSION_STEER, on_steer)]


def steer(manager: SessionManager, params: SteerSessionRequest) -> SteerSessionResponse:
    """Keep ``params.prompt`` for the running work of the session (see the module)."""
    session = manager.live(params.session_id)
    manager.require_controller(session.id, "steer its work")
    check_prompt(manager.agent, params.prompt)
    if session.state == "idle":
        return SteerSessionResponse(outcome="idle")
    message_id = session.new_message_id("user")
    session.emitter.emit(UserMessage(message_id=message_id, content=list(params.prompt)))
    session.data.setdefault(STEERING_KEY, []).append(list(params.prompt))
    return SteerSessionResponse(outcome="steered", message_id=message_id)


def take_steering(session: AgentSession) -> list[list[Any]]:
    """The content blocks steered into ``session`` since the last call, oldest first (each
    entry one request's blocks); the session keeps none of them afterwards."""
    waiting: list[list[Any]] = session.data.pop(STEERING_KEY, [])
    return waiting

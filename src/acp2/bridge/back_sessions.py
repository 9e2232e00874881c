"""The back bridge's session methods a v1 agent may not have: what is kept, and how.

v2's ``capabilities.session`` promises ``session/list``, ``session/resume`` and
``session/close`` (IN-09); a v1 agent advertises each on its own
(:class:`acp2.compat.v1.handshake.V1Sessions`). The back bridge forwards what the agent
advertised and, for the rest:

- ``session/resume`` without a cursor, for an agent with ``loadSession`` only: v1
  ``session/load``, whose replay is withheld (:class:`Replay`): a resume without
  ``replayFrom`` shows no history (SS-11). A v1 agent may replay after its answer
  (Gemini CLI 0.61 does), so the resume is answered once the agent has been quiet for
  :data:`REPLAY_QUIET` seconds (at most :data:`REPLAY_SETTLE`), and until the v2
  client's next prompt on the session its message, thought, tool call and plan updates
  are taken as replay, counted (``resume.replay_withheld``) and not sent; the rest
  (commands, modes, options, info, usage) is state and goes on;
- ``session/close`` without ``sessionCapabilities.close``: the bridge forgets the
  session (:class:`Forgotten`) after cancelling its running prompt, and says so in the
  answer's ``_meta["acp2"]["closedLocally"]``; later updates of that session are
  counted (``closed_session_update``) and not sent;
- ``session/list``, and ``session/resume`` with neither ``loadSession`` nor
  ``resume``: refused here with ``-32601`` naming the missing capability, never sent.

Answers of the agent reach the v2 side with the agent's reason in their message
(:func:`agent_call`): a v1 error whose message is generic ("Internal error") gets the
reason its ``data`` holds appended, and a result that does not decode is one ``-32603``
line naming the agent and the method.
"""

from __future__ import annotations

from typing import Any, Final, TypeVar

import anyio

import acp2.compat.v1.lift_params as hot
import acp2.compat.v1.schema as v1
import acp2.schema as v2
import acp2.schema.methods as v2m
from acp2.compat.v1 import client_side
from acp2.compat.v1.convert import Drops
from acp2.compat.v1.handshake import V1Sessions
from acp2.errors import (
    InvalidParams,
    MethodNotFound,
    RemoteProtocolError,
    RequestError,
    internal_error,
    with_reason,
)
from acp2.rpc.link import Link
from acp2.schema.extensions import META_KEY
from acp2.schema.methods import MethodSpec

__all__ = [
    "MAX_FORGOTTEN",
    "REPLAYED",
    "REPLAY_QUIET",
    "REPLAY_SETTLE",
    "Forgotten",
    "Replay",
    "agent_call",
    "closed_locally",
    "explain",
    "load_for_resume",
    "resume_request",
]

P = TypeVar("P")
R = TypeVar("R")

#: Seconds without an update that end a stand-in load's replay, and the longest wait
#: for that after the load's answer.
REPLAY_QUIET: Final = 0.2
REPLAY_SETTLE: Final = 2.0
#: Locally closed session ids remembered (their late updates are dropped, not held).
MAX_FORGOTTEN: Final = 1024
#: The v1 update kinds a replay is made of (history, not state).
REPLAYED: Final = (
    hot.UserMessageChunk,
    hot.AgentMessageChunk,
    hot.AgentThoughtChunk,
    v1.ToolCall,
    v1.SessionToolCallUpdate,
    v1.Plan,
)


async def agent_call(agent: Link, name: str, spec: MethodSpec[P, R], params: P) -> R:
    """``agent.call(spec, params)`` with the agent's reason kept: a ``RequestError``
    answer is re-raised :func:`explain` ed; a malformed result (``null`` where an object
    is required) raises one ``-32603`` naming the agent ``name`` and the method."""
    try:
        return await agent.call(spec, params)
    except RequestError as exc:
        raise explain(exc) from None
    except RemoteProtocolError as exc:
        why = str(exc.__cause__ or exc)
        message = f"the ACP v1 agent {name} answered {spec.name} with a malformed result: {why}"
        raise internal_error(message) from None


def explain(exc: RequestError) -> RequestError:
    """``exc`` with the reason from its ``data`` in its message
    (:func:`acp2.errors.with_reason`: ``"Internal error"`` and ``data.details`` ->
    ``"Internal error: <details>"``); ``data`` is kept. Returns ``exc`` itself."""
    exc.message = with_reason(exc.message, exc.data)
    exc.args = (exc.message,)
    return exc


def load_for_resume(request: v1.ResumeSessionRequest) -> v1.LoadSessionRequest:
    """The v1 ``session/load`` that stands in for ``request`` (an agent without
    ``sessionCapabilities.resume``): same session, roots and MCP servers."""
    servers = request.mcp_servers if isinstance(request.mcp_servers, list) else []
    return v1.LoadSessionRequest(**client_side.reopening(request, servers))


def closed_locally() -> v2.CloseSessionResponse:
    """The ``session/close`` answer of a session the bridge forgot itself."""
    return v2.CloseSessionResponse(meta={META_KEY: {"closedLocally": True}})


class Replay:
    """A ``session/load`` that may still be replaying after its answer: the resume is
    answered once the agent is quiet (:meth:`ended`). With ``withhold`` (the load stands
    in for a resume without replay) the agent's history updates are dropped until the v2
    client's next prompt on the session (:meth:`withheld`); without, they go on and reach
    the client before the resume's answer, as SS-14 asks."""

    def __init__(self, dropped: Drops, *, withhold: bool = True) -> None:
        self._dropped = dropped
        self._heard = anyio.Event()
        self._withhold = withhold

    def withheld(self, update: Any) -> bool:
        """Whether ``update`` (read for the session now) is replay to drop (then counted
        in ``dropped["resume.replay_withheld"]``); state updates go on."""
        self._heard.set()
        if not (self._withhold and isinstance(update, REPLAYED)):
            return False
        self._dropped["resume.replay_withheld"] += 1
        return True

    async def ended(self) -> None:
        """Return once the agent has sent nothing for the session for
        :data:`REPLAY_QUIET` seconds, or :data:`REPLAY_SETTLE` seconds after the call: a
        v1 agent may go on replaying after its ``session/load`` answer (Gemini CLI 0.61
        does), and what it replays must not be taken for the next prompt's reply."""
        with anyio.move_on_after(REPLAY_SETTLE):
            while True:
                self._heard = anyio.Event()
                with anyio.move_on_after(REPLAY_QUIET) as quiet:
                    await self._heard.wait()
                if quiet.cancelled_caught:
                    return


def resume_request(
    params: v2.ResumeSessionRequest, can: V1Sessions, dropped: Drops
) -> v1.LoadSessionRequest | v1.ResumeSessionRequest:
    """The v1 request for a v2 resume (:func:`acp2.compat.v1.client_side.resume_request_to_v1`);
    ``MethodNotFound`` when the agent can neither load nor resume, ``InvalidParams`` for a
    cursor it cannot serve."""
    if not can.resumes:
        raise MethodNotFound(can.refusal(v2m.SESSION_RESUME.name))
    try:
        request = client_side.resume_request_to_v1(params, dropped)
    except client_side.InvalidParams as exc:
        raise InvalidParams(str(exc)) from None
    if isinstance(request, v1.LoadSessionRequest) and not can.can_load:
        raise InvalidParams("the v1 agent cannot replay a session (no loadSession)")
    return request


class Forgotten:
    """Session ids the bridge closed itself, at most :data:`MAX_FORGOTTEN` (the oldest
    goes): their late updates are dropped, counted in ``dropped["closed_session_update"]``."""

    def __init__(self, dropped: Drops) -> None:
        self._ids: dict[str, None] = {}
        self._dropped = dropped

    def add(self, session_id: str) -> None:
        """Remember ``session_id`` as closed here."""
        self._ids[session_id] = None
        if len(self._ids) > MAX_FORGOTTEN:
            del self._ids[next(iter(self._ids))]

    def discard(self, session_id: str) -> None:
        """``session_id`` is open again (resumed)."""
        self._ids.pop(session_id, None)

    def swallow(self, session_id: str) -> bool:
        """Whether an update of ``session_id`` belongs to a session closed here (counted)."""
        if session_id not in self._ids:
            return False
        self._dropped["closed_session_update"] += 1
        return True

"""Running one piece of foreground work from ``running`` to its single ``idle``.

The guarantees: ``user_message`` (for a prompt) goes out first, then ``running``, the
handler's output, and exactly one ``idle`` with a stop reason -- ``cancelled`` after
``session/cancel``, ``error`` (with an ``error`` object and a readable agent message)
when the handler raises. Unfinished tool calls get their final status before that idle.
Work whose connection closes (a send found it closed, or the connection's work is
cancelled) ends ``idle`` / ``cancelled`` too.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import anyio

from acp2.errors import ConnectionClosed, InternalError, summarize
from acp2.lifecycle import CANCELLED, END_TURN, ERROR
from acp2.schema import Error, TextContent

if TYPE_CHECKING:
    from acp2.agent.session import AgentSession
    from acp2.agent.turn import Turn

__all__ = ["WorkHandler", "run_turn"]

log = logging.getLogger("acp2.agent")

#: A prompt handler, or the body of agent-initiated work: returns the stop reason.
WorkHandler = Callable[["Turn"], Awaitable[str | None]]


async def run_turn(
    session: AgentSession, turn: Turn, user_frame: bytes | None, body: WorkHandler | None
) -> None:
    """Run ``body(turn)`` as the session's foreground work, then release its slot;
    ``user_frame`` is the ``user_message`` frame of a prompt (already recorded).

    Never raises (but for cancellation of the whole connection): a failure of the
    runtime itself is logged and still ends the work ``idle`` / ``error`` if it can.
    """
    try:
        if user_frame is not None:
            session.emitter.send_frame(user_frame)
            del user_frame  # the outbox holds it until written
        session.report("start")
        if body is None:
            reason, failure = END_TURN, None
        else:
            reason, failure = await session.run_work(lambda: body(turn))
        await _finish(session, turn, reason, failure)
    except ConnectionClosed:
        log.debug("connection closed during a turn of %s", session.id)
        _stop_cancelled(session)
    except anyio.get_cancelled_exc_class():
        # The connection's work is being cancelled (its client is gone): the work still
        # ends with its one idle, reported without awaiting anything.
        _stop_cancelled(session)
        raise
    except Exception as exc:
        log.exception("the agent runtime failed during a turn of %s", session.id)
        _force_idle(session, exc)
    finally:
        session.release()


async def _finish(
    session: AgentSession, turn: Turn, reason: str, failure: BaseException | None
) -> None:
    if isinstance(failure, ConnectionClosed):
        log.debug("connection closed during a turn of %s", session.id)
        _stop_cancelled(session)
        return
    fields: dict[str, Any] = {"stop_reason": reason}
    if turn.token_usage is not None:
        fields["usage"] = turn.token_usage  # Preview: an extra key every draft allows
    if reason == CANCELLED or failure is not None:
        # PL-20: final tool-call statuses go out before the idle that ends the work.
        for call in turn.unfinished_tool_calls():
            await (call.cancel() if failure is None else call.fail())
    if failure is not None:
        summary = summarize(failure)
        log.error("prompt handler failed in %s", session.id, exc_info=failure)
        turn.new_message()
        await turn.message([TextContent(text=f"The agent failed: {summary}")])
        fields["error"] = Error(code=InternalError.code, message=summary)
    session.report("stop", **fields)


def _stop_cancelled(session: AgentSession) -> None:
    """End the work ``idle`` / ``cancelled`` unless already idle (its client is gone)."""
    if session.state != "idle":
        try:
            session.report("stop", stop_reason=CANCELLED)
        except Exception:
            log.exception("could not report idle for %s", session.id)


def _force_idle(session: AgentSession, exc: Exception) -> None:
    """After a runtime failure, end the work ``idle`` / ``error`` unless already idle."""
    if session.state == "idle":
        return
    error = Error(code=InternalError.code, message=summarize(exc))
    try:
        session.report("stop", stop_reason=ERROR, error=error)
    except Exception:
        log.exception("could not report idle for %s", session.id)

"""Permission requests end to end on every transport: the client's answer reaches the
agent's handler, and the session reports requires_action while it waits (PR-01, PR-06,
PR-07, PL-10)."""

from __future__ import annotations

import anyio
import pytest
from e2e_desk import Desk

from acp2.client import ClientConnection
from acp2.schema import StateUpdate
from helpers.timeouts import TIMEOUT

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    ("answer", "status", "reply"),
    [("allow", "completed", "allowed"), ("deny", "failed", "denied")],
)
async def test_the_permission_answer_decides_what_the_agent_does(
    link: ClientConnection, desk: Desk, answer: str, status: str, reply: str
) -> None:
    desk.answer = answer
    with anyio.fail_after(TIMEOUT):
        session = await link.new_session()
        work = await session.prompt("ask")
        assert await work.wait() == "end_turn"
    assert desk.titles == ["Delete build/?"]
    (call,) = session.state.tool_calls.values()
    assert call.status == status
    assert work.text == reply


async def test_the_session_requires_action_while_the_question_is_open(
    link: ClientConnection, desk: Desk
) -> None:
    """requires_action before the request reaches the policy, running once it is
    answered, then idle."""
    desk.hold = True
    with anyio.fail_after(TIMEOUT):
        session = await link.new_session()
        work = await session.prompt("ask")
        async for update in work:
            if isinstance(update, StateUpdate) and update.state == "requires_action":
                break
        await desk.asked.wait()
        assert session.state.foreground == "requires_action"
        assert not work.done
        desk.release()
        assert await work.wait() == "end_turn"
    states = [u.state for u in work.updates if isinstance(u, StateUpdate)]
    assert states == ["running", "requires_action", "running", "idle"]
    assert work.text == "allowed"

"""Permission requests end to end on every transport: the client's answer reaches the
agent's handler, and the session reports requires_action while it waits (PR-01, PR-06,
PR-07, PL-10)."""

from __future__ import annotations

import anyio
import pytest
from e2e_desk import Desk
from e2e_links import V1

from acp2.client import ClientConnection
from acp2.schema import StateUpdate
from helpers.timeouts import TIMEOUT

pytestmark = pytest.mark.anyio


@pytest.mark.not_over(
    V1, "a v1 permission request has no title (the back bridge names it 'Permission required')"
)
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


@pytest.mark.not_over(
    V1,
    "v1 has no state updates and the back bridge makes up no requires_action for an open question",
)
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


@pytest.mark.not_over(V1, "v1 has no cancelled tool call status: the call ends failed")
async def test_cancel_while_the_question_is_open_ends_the_work_cancelled(
    link: ClientConnection, desk: Desk
) -> None:
    """The open question is answered cancelled by the client itself, the agent's handler
    is cancelled, and the work ends idle / cancelled (PL-16, PL-18)."""
    desk.hold = True
    with anyio.fail_after(TIMEOUT):
        session = await link.new_session()
        work = await session.prompt("ask")
        await desk.asked.wait()
        await session.cancel()
        assert await work.wait() == "cancelled"
        (call,) = session.state.tool_calls.values()
        assert call.status == "cancelled"
        desk.release()  # the policy's late answer changes nothing
        again = await session.prompt("echo next")
        assert await again.wait() == "end_turn"
    assert "allowed" not in work.text

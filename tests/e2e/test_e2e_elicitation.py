"""Form elicitation end to end on every transport: the client's policy answers, the
agent's handler gets the checked content, the session requires action meanwhile (EL-01,
EL-05, EL-14)."""

from __future__ import annotations

from functools import partial
from typing import Any

import anyio
import pytest
from e2e_links import V1

from acp2.client import ClientConnection, ElicitationRequest
from acp2.schema import StateUpdate
from helpers.timeouts import TIMEOUT

pytestmark = pytest.mark.anyio

Opener = partial[Any]


async def _elicit(opener: Opener, **options: Any) -> tuple[str, list[str]]:
    with anyio.fail_after(TIMEOUT):
        async with opener(**options) as client:
            assert isinstance(client, ClientConnection)
            session = await client.new_session()
            work = await session.prompt("elicit")
            assert await work.wait() == "end_turn"
    states = [u.state for u in work.updates if isinstance(u, StateUpdate)]
    return work.text, states


@pytest.mark.not_over(
    V1, "v1 has no elicitation: through the bridges the agent is told the client cannot ask"
)
@pytest.mark.parametrize(
    ("answer", "reply"),
    [({"name": "Ada"}, "accept Ada"), (None, "decline None"), ({"name": 7}, "bad")],
    ids=["accept", "decline", "malformed"],
)
async def test_the_policy_answer_reaches_the_handler_checked(
    opener: Opener, answer: Any, reply: str
) -> None:
    def policy(request: ElicitationRequest) -> Any:
        return answer

    text, states = await _elicit(opener, elicitation=policy)
    assert text == reply
    assert states == ["running", "requires_action", "running", "idle"]


async def test_without_a_policy_the_agent_is_told_the_client_cannot_ask(opener: Opener) -> None:
    text, states = await _elicit(opener)
    assert text == "unsupported"
    assert states == ["running", "idle"]

"""acp2's client driving a v1 agent with subagents (``protocol/v1/subagents``): the
client opts in, the back bridge lifts the v1 agent's ``subagent_update`` as v2's and
opens the child, so the child's own updates reach a child session of acp2's client."""

from __future__ import annotations

from typing import Any

import anyio
import back_ways
import pytest
from msgspec import Raw

import acp2.compat.v1.methods as v1m
import acp2.compat.v1.schema as v1
from acp2.client import ClientSession
from acp2.client.children import SubagentSession
from helpers.timeouts import TIMEOUT

pytestmark = pytest.mark.anyio

SESSION = "v1-session"
RESULT = v1.InitializeResponse(
    protocol_version=1,
    agent_info=v1.Implementation(name="in-process-v1-agent", version="1"),
    agent_capabilities=v1.AgentCapabilities(load_session=False),
)


@pytest.fixture(autouse=True, params=back_ways.WAYS)
def way(request: pytest.FixtureRequest) -> str:
    """Run every test both ways (see ``back_ways``)."""
    back_ways.WAY = request.param
    return str(request.param)


async def until(session: ClientSession, predicate: Any) -> None:
    while not predicate():
        await session._wait_change()


async def test_a_v1_agents_child_is_announced_and_its_updates_reach_a_child_session() -> None:
    async def new(params: v1.NewSessionRequest) -> v1.NewSessionResponse:
        return v1.NewSessionResponse(session_id=SESSION)

    def setup(agent: Any) -> None:
        agent.on(v1m.SESSION_NEW, new)

    announce = Raw(b'{"sessionUpdate":"subagent_update","sessionId":"c1","title":"Helper"}')
    said = v1.AgentMessageChunk(content=v1.TextContent(text="found it"), message_id="m1")
    with anyio.fail_after(TIMEOUT):
        async with back_ways.client_of(setup, RESULT) as (agent, client):
            parent = await client.new_session()
            await agent.notify(
                v1m.SESSION_UPDATE, v1.SessionNotification(session_id=SESSION, update=announce)
            )
            await agent.notify(
                v1m.SESSION_UPDATE, v1.SessionNotification(session_id="c1", update=said)
            )
            await until(parent, lambda: "c1" in parent.children)
            child = parent.children["c1"]
            assert isinstance(child, SubagentSession)
            assert child.entry.title == "Helper"
            await until(child, lambda: bool(child.state.messages))
            assert [m.text for m in child.state.messages.values()] == ["found it"]

"""Subagents end to end (Preview, "subagent_update"): an acp2 agent's handler spawns a
child session and runs work in it; acp2's client gets the child as a session of its own,
its states mirrored on the parent; the client cannot prompt or close the child and can
cancel it only when it was announced cancellable; a child spawned from a tool call is
named by that call's ``session`` content. Over a memory pair and acp2's serve app
(WebSocket, Streamable HTTP)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from acp2.agent import Agent, Turn
from acp2.client import ClientSession
from acp2.errors import InvalidParams, LocalProtocolError
from acp2.schema import CloseSessionRequest, PromptRequest, SessionReference, TextContent
from acp2.schema.methods import SESSION_CLOSE, SESSION_PROMPT
from acp2.store.sqlite import HistoryStore
from helpers.inprocess import OVER, served
from helpers.timeouts import TIMEOUT

pytestmark = pytest.mark.anyio


#: Where subagents cannot go, and why (data, not a run-time skip).
NOT_OVER = {
    "v1": "the harness's v1 hello does not opt in to subagents (clientCapabilities.subagents):"
    " the child is folded into the parent's tool call (tests/bridge/test_front_subagents.py)"
}


@pytest.fixture(params=[way for way in OVER if way not in NOT_OVER])
def over(request: pytest.FixtureRequest) -> str:
    """How the client reaches the agent in this run (:data:`helpers.inprocess.OVER`)."""
    way: str = request.param
    return way


@pytest.fixture
def cwd(tmp_path: Any) -> str:
    return str(tmp_path)


def agent() -> Agent:
    async def handle(turn: Turn) -> str:
        cancellable = turn.text == "wait"
        call = await turn.tool_call("Research", name="delegate") if turn.text == "tool" else None
        child = await turn.session.spawn_child(
            title="Researcher",
            description="looks things up",
            cancellable=cancellable,
            tool_call=call,
        )

        async def research(sub: Turn) -> str:
            await sub.say("child says hi")
            if cancellable:
                await anyio.sleep_forever()
            return "end_turn"

        await child.start_work(research)
        await child.wait_idle()
        if call is not None:
            await call.complete()
        await turn.say("parent done")
        return "end_turn"

    return Agent("subagents", store=HistoryStore(":memory:"), prompt_handler=handle)


async def until(session: ClientSession, predicate: Any) -> None:
    while not predicate():
        await session._wait_change()


async def test_a_spawned_child_streams_under_its_own_id_and_its_state_is_mirrored(
    cwd: str, over: str
) -> None:
    with anyio.fail_after(TIMEOUT):
        async with served(agent(), over=over, cwd=cwd) as client:
            parent = await client.new_session()
            work = await parent.prompt("go")
            assert await work.wait() == "end_turn"
            assert work.text == "parent done"
            (child,) = parent.children.values()
            assert child.entry.title == "Researcher"
            assert child.entry.description == "looks things up"
            # Over Streamable HTTP the child's updates come on a stream of their own, in
            # no fixed order with the parent's: wait for its last one, not its first.
            await until(child, lambda: child.state.foreground == "idle" and child.state.messages)
            assert [m.text for m in child.state.messages.values()] == ["child says hi"]
            assert child.entry.state.state == "idle"
            assert child.entry.state.stop_reason == "end_turn"
            assert not child.may_cancel


async def test_the_agent_refuses_a_prompt_or_a_close_for_a_child(cwd: str, over: str) -> None:
    with anyio.fail_after(TIMEOUT):
        async with served(agent(), over=over, cwd=cwd) as client:
            parent = await client.new_session()
            await (await parent.prompt("go")).wait()
            (child_id,) = parent.children
            link = client._link
            prompt = PromptRequest(session_id=child_id, prompt=[TextContent(text="hi")])
            with pytest.raises(InvalidParams):
                await link.call(SESSION_PROMPT, prompt)
            with pytest.raises(InvalidParams):
                await link.call(SESSION_CLOSE, CloseSessionRequest(session_id=child_id))
            with pytest.raises(LocalProtocolError):
                await parent.children[child_id].prompt("hi")


async def test_a_cancellable_child_is_cancelled_by_the_client_and_its_parent_goes_on(
    cwd: str, over: str
) -> None:
    with anyio.fail_after(TIMEOUT):
        async with served(agent(), over=over, cwd=cwd) as client:
            parent = await client.new_session()
            work = await parent.prompt("wait")
            await until(parent, lambda: bool(parent.children))
            (child,) = parent.children.values()
            await until(child, lambda: child.may_cancel and child.state.foreground == "running")
            await child.cancel()
            assert (
                child.state.stop_reason == "cancelled"
                or child.entry.state.stop_reason == "cancelled"
            )
            assert await work.wait() == "end_turn"
            assert work.text == "parent done"


async def test_closing_the_parent_closes_its_children(cwd: str, over: str) -> None:
    with anyio.fail_after(TIMEOUT):
        async with served(agent(), over=over, cwd=cwd) as client:
            parent = await client.new_session()
            await (await parent.prompt("go")).wait()
            (child_id,) = parent.children
            await parent.close()
            assert child_id not in client._link.sessions


async def test_a_child_spawned_from_a_tool_call_is_named_by_that_calls_content(
    cwd: str, over: str
) -> None:
    with anyio.fail_after(TIMEOUT):
        async with served(agent(), over=over, cwd=cwd) as client:
            parent = await client.new_session()
            assert await (await parent.prompt("tool")).wait() == "end_turn"
            (child_id,) = parent.children
            (call,) = parent.state.tool_calls.values()
            assert call.status == "completed"
            assert call.content == [SessionReference(session_id=child_id)]

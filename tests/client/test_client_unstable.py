"""The client's Preview requests ``session/fork`` and ``session/set_title``: sent only to an
agent that advertised ``session.fork`` / ``session.title``, refused locally otherwise."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from acp2.agent import Agent, Turn
from acp2.errors import LocalProtocolError
from acp2.state import MessageState
from acp2.store.sqlite import HistoryStore
from helpers.inprocess import served, serving
from helpers.timeouts import TIMEOUT

pytestmark = pytest.mark.anyio

CWD = "/tmp"


def _agent(**config: Any) -> Agent:
    agent = Agent("echo", store=HistoryStore(":memory:"), **config)

    @agent.prompt
    async def handle(turn: Turn) -> str:
        await turn.say(f"echo {turn.text}")
        return "end_turn"

    return agent


async def test_a_fork_is_a_new_live_session_that_starts_from_the_sources_history() -> None:
    with anyio.fail_after(TIMEOUT):
        async with served(_agent(), cwd=CWD) as client:
            source = await client.new_session()
            await (await source.prompt("one")).wait()
            forked = await client.fork(source.id)
            assert forked.id != source.id
            assert await (await forked.prompt("two")).wait() == "end_turn"
            resumed = await client.resume(forked.id, replay=True)
    said = [m.text for m in resumed.state.timeline if isinstance(m, MessageState)]
    assert said == ["one", "echo one", "two", "echo two"]


async def test_set_title_returns_the_stored_title_and_the_state_shows_it() -> None:
    with anyio.fail_after(TIMEOUT):
        async with served(_agent(), cwd=CWD) as client:
            session = await client.new_session()
            stored = await client.set_title(session.id, "  Fix   it ")
            await (await session.prompt("x")).wait()  # the update came before this turn
    assert stored == "Fix it"
    assert session.state.title == "Fix it"


async def test_a_title_set_from_another_connection_reaches_the_client_holding_the_session() -> None:
    with anyio.fail_after(TIMEOUT):
        async with serving(_agent()) as agents:
            holder = await agents.connect(cwd=CWD)
            other = await agents.connect(cwd=CWD)
            session = await holder.new_session()
            titled = anyio.Event()
            session.add_listener(lambda update, raw: titled.set())
            assert await other.set_title(session.id, "From elsewhere") == "From elsewhere"
            await titled.wait()
    assert session.state.title == "From elsewhere"


async def test_archive_and_unarchive_move_a_session_out_of_and_back_into_the_list() -> None:
    with anyio.fail_after(TIMEOUT):
        async with served(_agent(), cwd=CWD) as client:
            session = await client.new_session()
            await client.archive(session.id)
            hidden = [s.session_id for s in await client.list_sessions()]
            await client.archive(session.id, archived=False)
            shown = [s.session_id for s in await client.list_sessions()]
    assert session.id not in hidden
    assert session.id in shown


async def test_without_the_capabilities_the_client_sends_neither_request() -> None:
    with anyio.fail_after(TIMEOUT):
        agent = _agent(fork=False, set_title=False, archive=False)
        async with served(agent, cwd=CWD) as client:
            session = await client.new_session()
            with pytest.raises(LocalProtocolError, match=r"session\.fork"):
                await client.fork(session.id)
            with pytest.raises(LocalProtocolError, match=r"session\.title"):
                await client.set_title(session.id, "x")
            with pytest.raises(LocalProtocolError, match="steering"):
                await client.steer(session.id, "x")
            with pytest.raises(LocalProtocolError, match=r"session\.archive"):
                await client.archive(session.id)

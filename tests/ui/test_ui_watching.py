"""What the chat front-ends share for a session other clients use too (acp2.ui.watching):
the session list of ``--attach`` (the agent's text sanitized), ``/info``, and noticing a
turn of another client that started and ended before the chat looked."""

from __future__ import annotations

import anyio
import pytest

from acp2.agent import Agent, Turn
from acp2.client import deny_all
from acp2.schema import SessionInfoUpdate
from acp2.ui.watching import Watch, info_lines, pick_session
from helpers.inprocess import served
from helpers.timeouts import TIMEOUT

pytestmark = pytest.mark.anyio

CWD = "/tmp/acp2-ui-tests"


def titled_agent() -> Agent:
    """An agent whose sessions take the prompt's text as their title."""
    agent = Agent("titled", version="1", store=":memory:")

    @agent.prompt
    async def handle(turn: Turn) -> str:
        await turn.send(SessionInfoUpdate(title=turn.text))
        return "end_turn"

    return agent


async def test_the_session_list_shows_the_agents_text_sanitized_and_returns_the_pick() -> None:
    notes: list[str] = []
    asked: list[str] = []

    async def answer(question: str) -> str:
        asked.append(question)
        return "1\n"

    with anyio.fail_after(TIMEOUT):
        async with served(titled_agent(), cwd=CWD, permissions=deny_all) as client:
            session = await client.new_session()
            await (await session.prompt("evil\x1b[2J\x07 title")).wait()
            picked = await pick_session(client, notes.append, answer)
    assert picked == session.id
    assert asked == ["attach to which? [1-1, enter: none] "]
    assert len(notes) == 1
    assert notes[0].startswith(f" 1  {session.id}  evil")
    assert "\x1b" not in notes[0]
    assert "\x07" not in notes[0]
    assert CWD in notes[0]


async def test_an_answer_that_names_no_listed_session_picks_nothing() -> None:
    notes: list[str] = []

    async def answer(question: str) -> str:
        return "7\n"

    with anyio.fail_after(TIMEOUT):
        async with served(titled_agent(), cwd=CWD, permissions=deny_all) as client:
            await client.new_session()
            assert await pick_session(client, notes.append, answer) is None
    assert notes[-1] == "no session '7'"


async def test_info_gives_the_id_the_role_and_for_a_remote_agent_the_attach_command() -> None:
    with anyio.fail_after(TIMEOUT):
        async with served(titled_agent(), cwd=CWD, permissions=deny_all) as client:
            session = await client.new_session()
            remote = info_lines(session, "http://127.0.0.1:8000/acp")
            local = info_lines(session, None)
    assert remote[:3] == [f"session {session.id}", f"folder  {CWD}", "role    controller"]
    attach = f"acp2 chat --url http://127.0.0.1:8000/acp --attach {session.id}"
    assert remote[3] == f"watch from another terminal: {attach}"
    assert local == remote[:3]


async def test_a_turn_that_started_and_ended_before_anyone_looked_is_unseen_until_seen() -> None:
    with anyio.fail_after(TIMEOUT):
        async with served(titled_agent(), cwd=CWD, permissions=deny_all) as client:
            session = await client.new_session()
            watch = Watch(session)
            assert not watch.unseen()
            await (await session.prompt("quick")).wait()
            assert not session.state.busy
            assert watch.unseen()  # idle again, but a turn ran
            watch.see()
            assert not watch.unseen()
            watch.close()

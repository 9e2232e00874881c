"""``session/fork`` and ``session/set_title`` on the agent runtime (Preview, unstable;
``rfds/session-fork``, ``rfds/session-set-title``): served and advertised by default,
registered from the method table, neither when turned off."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from agent_harness import CWD, agent_harness, make_agent

from acp2.agent import AgentSession, Turn
from acp2.errors import InternalError, InvalidParams, MethodNotFound, ResourceNotFound

pytestmark = pytest.mark.anyio


def _echo(**config: Any) -> Any:
    agent = make_agent(**config)

    @agent.prompt
    async def handle(turn: Turn) -> str:
        turn.session.data.setdefault("said", []).append(turn.text)
        await turn.say(f"echo {turn.text}")
        return "end_turn"

    return agent


def _texts(updates: list[dict[str, Any]]) -> list[str]:
    found = []
    for u in updates:
        content = u.get("content")
        if u["sessionUpdate"] in ("user_message", "agent_message", "agent_message_chunk"):
            blocks = content if isinstance(content, list) else [content]
            found += [b["text"] for b in blocks if isinstance(b, dict) and "text" in b]
    return found


async def _replayed(h: Any, session_id: str) -> list[str]:
    before = len(h.updates(session_id))
    params = {"sessionId": session_id, "cwd": CWD, "replayFrom": {"type": "start"}}
    await h.call("session/resume", params)
    return _texts(h.updates(session_id)[before:])


async def test_the_agent_advertises_fork_and_title_by_default() -> None:
    async with agent_harness(make_agent()) as h:
        session = (await h.initialize())["capabilities"]["session"]
    assert session["fork"] == {}
    assert session["title"] == {}


async def test_a_fork_copies_the_history_under_a_new_id_and_leaves_the_source_as_it_was() -> None:
    async with agent_harness(_echo(), initialize=True, validate="agent") as h:
        source = await h.new_session()
        await h.turn(source, "one")
        forked = (await h.call("session/fork", {"sessionId": source, "cwd": CWD}))["sessionId"]
        assert forked != source
        await h.turn(forked, "two")
        assert await _replayed(h, forked) == ["one", "echo one", "two", "echo two"]
        assert await _replayed(h, source) == ["one", "echo one"]


async def test_the_fork_hook_gets_the_sources_data_and_the_new_session() -> None:
    seen: list[tuple[list[str], str]] = []

    async def on_fork(data: dict[str, Any], session: AgentSession) -> None:
        seen.append((list(data.get("said", [])), session.id))

    async with agent_harness(_echo(on_fork=on_fork), initialize=True, validate="agent") as h:
        source = await h.new_session()
        await h.turn(source, "one")
        forked = (await h.call("session/fork", {"sessionId": source, "cwd": CWD}))["sessionId"]
    assert seen == [(["one"], forked)]


async def test_a_failing_fork_hook_fails_the_fork_and_leaves_no_session() -> None:
    async def on_fork(data: dict[str, Any], session: AgentSession) -> None:
        raise RuntimeError("cannot copy")

    async with agent_harness(_echo(on_fork=on_fork), initialize=True, validate="agent") as h:
        source = await h.new_session()
        await h.turn(source, "one")
        with pytest.raises(InternalError):
            await h.call("session/fork", {"sessionId": source, "cwd": CWD})
        listed = await h.call("session/list", {})
    assert [s["sessionId"] for s in listed["sessions"]] == [source]


async def test_forking_an_unknown_session_is_32002() -> None:
    async with agent_harness(_echo(), initialize=True, validate="agent") as h:
        with pytest.raises(ResourceNotFound):
            await h.call("session/fork", {"sessionId": "sess_nope", "cwd": CWD})


async def test_a_title_is_normalised_sent_as_session_info_and_listed() -> None:
    async with agent_harness(_echo(), initialize=True, validate="agent") as h:
        sid = await h.new_session()
        answer = await h.call("session/set_title", {"sessionId": sid, "title": " Fix\n the  bug "})
        listed = await h.call("session/list", {})
        infos = [u for u in h.updates(sid) if u["sessionUpdate"] == "session_info_update"]
    assert answer == {"title": "Fix the bug"}
    assert [i["title"] for i in infos] == ["Fix the bug"]
    assert [s.get("title") for s in listed["sessions"]] == ["Fix the bug"]


async def test_an_empty_title_is_refused_and_nothing_changes() -> None:
    async with agent_harness(_echo(), initialize=True, validate="agent") as h:
        sid = await h.new_session()
        with pytest.raises(InvalidParams):
            await h.call("session/set_title", {"sessionId": sid, "title": " \n "})
        assert [u for u in h.updates(sid) if u["sessionUpdate"] == "session_info_update"] == []


async def test_a_title_persists_in_the_sqlite_file(tmp_path: Path) -> None:
    path = tmp_path / "history.db"
    async with agent_harness(_echo(store=str(path)), initialize=True, validate="agent") as h:
        sid = await h.new_session()
        await h.call("session/set_title", {"sessionId": sid, "title": "Kept"})
    with sqlite3.connect(path) as db:
        rows = db.execute("SELECT title FROM sessions WHERE id = ?", (sid,)).fetchall()
    assert rows == [("Kept",)]


async def test_with_fork_and_title_off_neither_is_advertised_nor_served() -> None:
    agent = _echo(fork=False, set_title=False)
    async with agent_harness(agent, validate="agent") as h:
        session = (await h.initialize())["capabilities"]["session"]
        sid = await h.new_session()
        with pytest.raises(MethodNotFound):
            await h.call("session/fork", {"sessionId": sid, "cwd": CWD})
        with pytest.raises(MethodNotFound):
            await h.call("session/set_title", {"sessionId": sid, "title": "x"})
    assert "fork" not in session
    assert "title" not in session

"""Resume order over real stdio: everything a resume owes precedes its response.

``acp2 test-agent`` in a subprocess, the wire tapped by the harness. After a
``session/resume`` the replay, its ``replay_complete`` (RFD session-replay-complete), the
``state_update`` snapshot (SS-16, D-14) and ``available_commands_update`` (D-19) all come
before the response, and nothing for the session follows it until the next prompt: a
trailing command list failed the public acp-tck's RESUME-202. Every frame is validated
under both drafts when the agent exits.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from agent_harness import CWD, TIMEOUT, Harness, harness_over

from acp2.transport.stdio import spawn_agent

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def _test_agent(store: Path) -> AsyncIterator[Harness]:
    argv = [sys.executable, "-m", "acp2", "test-agent", "--store", str(store)]
    async with spawn_agent(argv, grace=TIMEOUT) as process, harness_over(process) as h:
        await h.initialize()
        yield h
    problems = h.problems()
    assert not problems, "\n".join(problems[:20])


async def _recorded_session(store: Path) -> str:
    async with _test_agent(store) as h:
        sid = await h.new_session()
        await h.turn(sid, "echo hello there")
    return str(sid)


def _kinds_around_resume(h: Harness, sid: str) -> tuple[list[str], list[str]]:
    """The session's update kinds before the resume response, and those after it up to
    the next ``session/prompt`` request."""
    sent = h.index(lambda f: f.method == "session/resume")
    answered = h.response_index(h.request_id("session/resume"))
    prompt = h.index(lambda f: f.method == "session/prompt", answered)
    assert sent < answered < prompt

    def kinds(start: int, end: int) -> list[str]:
        return [
            str(f.update["sessionUpdate"])
            for f in h.frames[start:end]
            if f.update is not None and f.session_id == sid
        ]

    return kinds(sent, answered), kinds(answered, prompt)


async def _resume_then_prompt(h: Harness, sid: str, **params: Any) -> None:
    await h.call("session/resume", {"sessionId": sid, "cwd": CWD, **params})
    # Round trips give a trailing update every chance to arrive before the next prompt.
    await h.call("session/list", {})
    await h.call("session/list", {})
    await h.turn(sid, "echo again")


async def test_resume_202_commands_and_state_precede_the_resume_response(tmp_path: Path) -> None:
    store = tmp_path / "history.sqlite3"
    sid = await _recorded_session(store)
    async with _test_agent(store) as h:
        await _resume_then_prompt(h, sid)
        before, after = _kinds_around_resume(h, sid)
    assert before == ["state_update", "available_commands_update"]
    assert after == []


async def test_resume_202_with_replay_the_order_is_replay_marker_state_commands_response(
    tmp_path: Path,
) -> None:
    store = tmp_path / "history.sqlite3"
    sid = await _recorded_session(store)
    async with _test_agent(store) as h:
        await _resume_then_prompt(h, sid, replayFrom={"type": "start"})
        before, after = _kinds_around_resume(h, sid)
    marker = before.index("replay_complete")
    assert before[:2] == ["user_message", "agent_message"]  # the replayed history first
    assert before[marker:] == ["replay_complete", "state_update", "available_commands_update"]
    assert before.count("replay_complete") == 1
    assert after == []


async def test_replay_complete_is_sent_for_an_empty_replay_and_never_without_a_cursor(
    tmp_path: Path,
) -> None:
    store = tmp_path / "history.sqlite3"
    async with _test_agent(store) as h:
        sid = await h.new_session()  # no history at all
    async with _test_agent(store) as h:
        await _resume_then_prompt(h, sid, replayFrom={"type": "start"})
        await _resume_then_prompt(h, sid, replayFrom=None)
        replayed = [str(u["sessionUpdate"]) for u in h.updates(sid)]
    assert replayed.count("replay_complete") == 1
    # no conversation to replay (only the session's command list): the marker still comes
    assert replayed[: replayed.index("replay_complete")] == ["available_commands_update"]

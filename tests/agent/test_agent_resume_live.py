"""Resuming, with a replay, a session whose turn is streaming on this very connection.

RFD session-replay-complete: the agent holds the session's live updates while the replay
runs. Every live update is either in the replay (emitted before the history was read)
or sent after ``replay_complete`` -- never both, never lost -- so a client reducing the
resumed stream into a fresh state ends with exactly the text the agent stored.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import msgspec
import pytest
from agent_harness import CWD, agent_harness, make_agent

from acp2.agent import HistoryStore, Turn
from acp2.agent.replay import fold
from acp2.schema.codec import decode
from acp2.schema.updates import SessionUpdate
from acp2.state import SessionState, reduce

pytestmark = pytest.mark.anyio

WORDS = 3000


def _streaming_agent(store: HistoryStore) -> Any:
    agent = make_agent(store=store)

    @agent.prompt
    async def handle(turn: Turn) -> str:
        for i in range(WORDS):
            await turn.say(f"{i},")
            await anyio.lowlevel.checkpoint()  # let the resume interleave with the stream
        return "end_turn"

    return agent


def _reduced(updates: list[dict[str, Any]]) -> SessionState:
    state = SessionState()
    for update in updates:
        reduce(state, decode(msgspec.json.encode(update), SessionUpdate))
    return state


async def test_live_updates_wait_behind_the_replay_and_none_is_doubled_or_lost(
    tmp_path: Path,
) -> None:
    # On disk: the history is fetched in a worker thread, so the stream runs meanwhile.
    store = HistoryStore(tmp_path / "history.sqlite3")
    async with agent_harness(_streaming_agent(store), initialize=True) as h:
        sid = await h.new_session()
        await h.prompt(sid, "stream")
        await h.wait_for(lambda: len(h.updates(sid)) > 50)
        sent = h.index(lambda f: f.method == "session/resume")  # -1: not sent yet
        assert sent == -1
        await h.call(
            "session/resume", {"sessionId": sid, "cwd": CWD, "replayFrom": {"type": "start"}}
        )
        await h.wait_idle(sid)
        sent = h.index(lambda f: f.method == "session/resume")
        resumed = [f.update for f in h.frames[sent:] if f.update and f.session_id == sid]
    kinds = [u["sessionUpdate"] for u in resumed]
    first_replayed = kinds.index("user_message")
    marker = kinds.index("replay_complete")
    # Between the first replayed update and the marker: the replay only, no live chunk.
    assert "agent_message_chunk" not in kinds[first_replayed:marker]
    assert "agent_message_chunk" in kinds[marker:]  # the stream went on after it
    expected = "".join(f"{i}," for i in range(WORDS))
    stored = fold(store.updates(sid))
    assert stored.agent_text() == expected
    after_request = _reduced(resumed[first_replayed:])
    assert after_request.agent_text() == expected

"""Resuming a session with children (Preview subagents, RFD session-replay-complete):
the parent's replay re-announces each child before anything bearing its id, each child's
history follows under its own id, and every session gets exactly one ``replay_complete``
per resume with ``replayFrom``, after its last replayed update and before the response."""

from __future__ import annotations

from typing import Any

import pytest
from agent_harness import CWD, Harness, agent_harness, make_agent, text_of

from acp2.agent import HistoryStore, Turn
from acp2.agent.children import replayed
from acp2.schema import SubagentCancelCapabilities, SubagentCapabilities
from acp2.state import ChildSession

pytestmark = pytest.mark.anyio


def delegating_agent(store: HistoryStore) -> Any:
    agent = make_agent(store=store)

    @agent.prompt
    async def handle(turn: Turn) -> str:
        call = await turn.tool_call("Research", name="task")
        await call.start()

        async def research(sub: Turn, task: str) -> str:
            await sub.say(f"researching {task}")
            return "found it"

        await turn.delegate(turn.text, research, title="Researcher", tool_call=call)
        await call.complete()
        await turn.say("parent done")
        return "end_turn"

    return agent


async def _record(store: HistoryStore) -> tuple[str, str]:
    async with agent_harness(delegating_agent(store), validate=False) as h:
        sid = await h.start()
        await h.turn(sid, "cats")
        child = next(u for u in h.updates(sid) if u["sessionUpdate"] == "subagent_update")
        await h.wait_idle(child["sessionId"])
    return sid, child["sessionId"]


async def _resume(store: HistoryStore, sid: str, **params: Any) -> Harness:
    async with agent_harness(delegating_agent(store), initialize=True, validate=False) as h:
        await h.call("session/resume", {"sessionId": sid, "cwd": CWD, **params})
    return h


def _before_response(h: Harness) -> list[tuple[str | None, dict[str, Any]]]:
    at = h.response_index(h.request_id("session/resume"))
    return [(f.session_id, f.update) for f in h.frames[:at] if f.update is not None]


async def test_a_resume_replays_each_child_under_its_id_with_one_replay_complete_each() -> None:
    store = HistoryStore(":memory:")
    sid, child = await _record(store)
    h = await _resume(store, sid, replayFrom={"type": "start"})
    replay = _before_response(h)
    markers = [who for who, u in replay if u["sessionUpdate"] == "replay_complete"]
    assert markers == [child, sid]  # one each: the child's inside the parent's replay
    first_child = next(i for i, (who, _) in enumerate(replay) if who == child)
    (announced,) = [i for i, (_, u) in enumerate(replay) if u["sessionUpdate"] == "subagent_update"]
    named = next(i for i, (_, u) in enumerate(replay) if "session" in str(u.get("content")))
    assert announced < named < first_child
    announcement = replay[announced][1]
    assert announcement["sessionId"] == child
    assert announcement["title"] == "Researcher"
    assert announcement["state"]["stopReason"] == "end_turn"
    assert announcement["capabilities"] is None  # its work is gone: no cancel to offer
    child_texts = [text_of(u) for who, u in replay if who == child and "content" in u]
    assert child_texts == ["cats", "researching cats", "found it"]
    assert replay[-1] == (sid, {"sessionUpdate": "state_update", "state": "idle"})
    assert h.problems(("agent",)) == []


async def test_a_resume_without_replay_from_sends_no_marker_for_parent_or_child() -> None:
    store = HistoryStore(":memory:")
    sid, _ = await _record(store)
    h = await _resume(store, sid)
    kinds = [u["sessionUpdate"] for _, u in _before_response(h)]
    assert kinds == ["state_update"]


def test_a_replayed_child_keeps_cancel_only_when_it_is_live() -> None:
    caps = SubagentCapabilities(cancel=SubagentCancelCapabilities())
    entry = ChildSession("sess_c", title="t", capabilities=caps)
    assert replayed(entry, live=True).capabilities == caps
    assert replayed(entry, live=False).capabilities is None
    assert replayed(entry, live=False).title == "t"

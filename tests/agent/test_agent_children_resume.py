"""Resuming a session with children (Preview subagents, RFD session-replay-complete):
the parent's replay re-announces each child before anything bearing its id, each child's
history follows under its own id, and every session gets exactly one ``replay_complete``
per resume with ``replayFrom``, after its last replayed update and before the response."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from agent_harness import CWD, Harness, agent_harness, make_agent, text_of

from acp2.agent import HistoryStore, Turn
from acp2.agent.children import replayed
from acp2.schema import (
    AgentMessageChunk,
    SubagentCancelCapabilities,
    SubagentCapabilities,
    TextContent,
)
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


def _is_marker(frame: Any) -> bool:
    return (frame.update or {}).get("sessionUpdate") == "replay_complete"


def _is_marker(frame: Any) -> bool:
    return bool((frame.update or {}).get("sessionUpdate") == "replay_complete")


class _Interrupting(HistoryStore):
    """A store that runs ``during`` right after it took the snapshot of ``target``'s
    history (at the first batch read): what a live child emits while the replay runs."""

    def __init__(self) -> None:
        super().__init__(":memory:")
        self.target: str | None = None
        self.during: Any = None

    def row_batches(self, session_id: str, rows: int = 64) -> Any:
        batches = super().row_batches(session_id, rows)
        if session_id != self.target or self.during is None:
            return batches
        during, self.during = self.during, None

        def interrupted() -> Any:
            first = next(batches, None)  # the snapshot is taken
            during()
            if first is not None:
                yield first
                yield from batches

        return interrupted()


async def test_a_live_childs_update_sent_during_the_replay_is_held_until_its_marker() -> None:
    store = _Interrupting()
    agent = make_agent(store=store)
    children: list[Any] = []
    release = anyio.Event()

    @agent.prompt
    async def handle(turn: Turn) -> str:
        async def research(sub: Turn, task: str) -> str:
            children.append(sub.session)
            await sub.say("before")
            await release.wait()
            return "done"

        await turn.delegate("wait", research, title="Researcher")
        return "end_turn"

    async with agent_harness(agent, validate=False) as h:
        sid = await h.start()
        await h.prompt(sid, "go")
        await h.wait_for(lambda: children and h.updates(children[0].id))
        child = children[0]
        await h.wait_for(lambda: any(text_of(u) == "before" for u in h.updates(child.id)))
        live = AgentMessageChunk(message_id="m_live", content=TextContent(text="during"))
        store.target = child.id
        store.during = lambda: child.emitter.emit(live)
        start = len(h.frames)
        await h.call(
            "session/resume", {"sessionId": sid, "cwd": CWD, "replayFrom": {"type": "start"}}
        )
        await h.wait_for(lambda: any(text_of(u) == "during" for u in h.updates(child.id)))
        frames = h.frames[start:]
        marks = [i for i, f in enumerate(frames) if _is_marker(f) and f.session_id == child.id]
        said = [i for i, f in enumerate(frames) if f.update and text_of(f.update) == "during"]
        assert len(marks) == 1
        assert len(said) == 1  # not in the replay as well
        assert said[0] > marks[0]  # held: live, after the child's marker
        release.set()
        await h.wait_idle(sid)

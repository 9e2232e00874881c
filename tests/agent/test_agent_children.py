"""Child sessions on the agent runtime (Preview subagents, "protocol/v2/subagents"): a
handler delegates from a tool call to a child session; the parent announces the child
(``subagent_update``) before the call's ``session`` content names it ("a tool call can
link to a session with session content", announcements/subagents-stabilized), and the
child's updates go out under its own id.

Every frame is validated under Aug and Nov, the drafts it is sent under (there
``subagent_update`` and ``session`` content are their unions' ``other`` fallbacks), and
under the Preview as modelled (``acp-v2-preview.json``), the newest schema that has
``subagent_update``. No vendored schema has ``session`` tool-call content (modelled from
the Subagent Sessions RFD), so it is the fallback under all three.
"""

from __future__ import annotations

from typing import Any

import pytest
from agent_harness import Harness, agent_harness, make_agent

from acp2.agent import Turn
from acp2.agent.handles import ToolCallHandle
from acp2.errors import LocalProtocolError
from acp2.testing.scenarios import build_test_agent
from schema_validation import Conversation

pytestmark = pytest.mark.anyio

DRAFTS = ("aug", "nov", "preview")


def problems(h: Harness) -> list[str]:
    """Schema problems of every frame, under each of :data:`DRAFTS`."""
    found: list[str] = []
    for draft in DRAFTS:
        conversation = Conversation(draft)  # type: ignore[arg-type]
        for i, frame in enumerate(h.frames):
            for problem in conversation.validate(frame.message, frame.sender):  # type: ignore[arg-type]
                found.append(f"[{draft}] #{i} {problem}")
    return found


def first(h: Harness, predicate: Any) -> int:
    """The index of the first frame ``predicate`` accepts (``len(frames)`` if none)."""
    return next((i for i, f in enumerate(h.frames) if predicate(f)), len(h.frames))


def delegating_agent(stash: list[ToolCallHandle] | None = None) -> Any:
    """``delegate``: a tool call runs a child that says hi; ``stash``: only report a call
    (kept in ``stash``); ``borrow``: spawn a child from the stashed call of another
    session (refused, reported as the text)."""

    async def handle(turn: Turn) -> str:
        if turn.text == "stash" and stash is not None:
            stash.append(await turn.tool_call("Someone else's call"))
            return "end_turn"
        if turn.text == "borrow" and stash:
            try:
                await turn.session.spawn_child(title="x", tool_call=stash[0])
            except LocalProtocolError as exc:
                await turn.say(f"refused: {exc}")
            return "end_turn"
        call = await turn.tool_call("Ask the researcher", name="delegate")
        await call.start()
        child = await turn.session.spawn_child(title="Researcher", tool_call=call)

        async def research(sub: Turn) -> str:
            await sub.say("child says hi")
            return "end_turn"

        await child.start_work(research)
        await child.wait_idle()
        await call.complete()
        return "end_turn"

    agent = make_agent()
    agent.prompt(handle)
    return agent


async def test_a_child_spawned_from_a_tool_call_is_announced_before_the_call_names_it() -> None:
    async with agent_harness(delegating_agent(), validate=False) as h:
        sid = await h.start()
        await h.turn(sid, "delegate")
        (announce,) = [u for u in h.updates(sid) if u["sessionUpdate"] == "subagent_update"][:1]
        child = announce["sessionId"]
        await h.wait_idle(child)
        announced = first(h, lambda f: (f.update or {}).get("sessionUpdate") == "subagent_update")
        reference = {"type": "session", "sessionId": child}
        named = first(h, lambda f: (f.update or {}).get("content") == reference)
        child_traffic = first(h, lambda f: f.session_id == child)
        assert announced < named < child_traffic < len(h.frames)
        assert h.frames[named].session_id == sid
        assert h.frames[named].update["sessionUpdate"] == "tool_call_content_chunk"  # type: ignore[index]
        said = [u for u in h.updates(child) if u["sessionUpdate"] == "agent_message_chunk"]
        assert said
    assert problems(h) == []


async def test_a_tool_call_of_another_session_is_refused_and_nothing_is_announced() -> None:
    stash: list[ToolCallHandle] = []
    async with agent_harness(delegating_agent(stash), validate=False) as h:
        first_sid = await h.start()
        await h.turn(first_sid, "stash")
        second = await h.new_session()
        await h.turn(second, "borrow")
        texts = [u for u in h.updates(second) if u["sessionUpdate"] == "agent_message_chunk"]
        assert "is not a call of session" in texts[0]["content"]["text"]
        kinds = {u["sessionUpdate"] for u in h.updates(second)}
        assert "subagent_update" not in kinds
    assert problems(h) == []


async def test_the_test_agents_subagent_scenario_is_valid_under_every_draft() -> None:
    async with agent_harness(build_test_agent(), validate=False) as h:
        sid = await h.start()
        await h.turn(sid, "subagent found three pages")
        updates = h.updates(sid)
        (announce,) = [u for u in updates if u["sessionUpdate"] == "subagent_update"][:1]
        child = announce["sessionId"]
        assert (announce["title"], announce["description"]) == ("helper", "a test subagent")
        await h.wait_idle(child)
        chunks = [u for u in updates if u["sessionUpdate"] == "tool_call_content_chunk"]
        assert chunks[0]["content"] == {"type": "session", "sessionId": child}
        mirrored = [u for u in updates if u["sessionUpdate"] == "subagent_update" and "state" in u]
        assert mirrored[-1]["state"]["stopReason"] == "end_turn"
    found = problems(h)
    assert found == [], "\n".join(found[:10])

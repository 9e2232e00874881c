"""Messages between a session and its children on the agent runtime (Preview subagents,
``session_message`` / ``session_message_chunk``, announcements/subagents-stabilized):
each message shows in both transcripts under each session's own id, each copy naming the
other; ``Turn.delegate`` hands a task to a child and gets its report back that way."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from agent_harness import TIMEOUT, Harness, agent_harness, make_agent, text_of

from acp2.agent import Delegation, Turn
from acp2.errors import LocalProtocolError
from schema_validation import Conversation

pytestmark = pytest.mark.anyio


def problems(h: Harness) -> list[str]:
    """Schema problems of every frame under Aug, Nov and the Preview as modelled."""
    found: list[str] = []
    for draft in ("aug", "nov", "preview"):
        conversation = Conversation(draft)  # type: ignore[arg-type]
        for i, frame in enumerate(h.frames):
            for problem in conversation.validate(frame.message, frame.sender):  # type: ignore[arg-type]
                found.append(f"[{draft}] #{i} {problem}")
    return found


def delegating_agent(results: list[Delegation]) -> Any:
    """``task``: a tool call delegates "count to three" to a child that streams a second
    block to its parent and reports "one two three"; ``stranger``: messages a session
    that is neither parent nor child (refused, said as text)."""
    agent = make_agent()
    sessions: list[Any] = []

    @agent.prompt
    async def handle(turn: Turn) -> str:
        sessions.append(turn.session)
        if turn.text == "stranger":
            try:
                await turn.session.send_message(sessions[0], "hi")
            except LocalProtocolError as exc:
                await turn.say(f"refused: {exc}")
            return "end_turn"
        call = await turn.tool_call("Count", name="task")
        await call.start()

        async def count(sub: Turn, task: str) -> str:
            assert sub.session.inbox[0].text == task
            handle = await sub.session.send_message(sub.session.parent, "working")  # type: ignore[arg-type]
            await handle.append(" hard")
            return "one two three"

        result = await turn.delegate("count to three", count, title="Counter", tool_call=call)
        results.append(result)
        await call.complete()
        return "end_turn"

    return agent


async def test_a_delegated_task_and_its_report_show_in_both_transcripts_naming_each_other() -> None:
    results: list[Delegation] = []
    async with agent_harness(delegating_agent(results), validate=False) as h:
        sid = await h.start()
        await h.turn(sid, "task")
        (result,) = results
        child = result.child.id
        await h.wait_idle(child)
        assert (result.report, result.stop_reason) == ("one two three", "end_turn")
        mine = [u for u in h.updates(sid) if u["sessionUpdate"] == "session_message"]
        theirs = [u for u in h.updates(child) if u["sessionUpdate"] == "session_message"]
        # parent -> child (the task), child -> parent ("working", then the report)
        assert [text_of(u) for u in mine] == ["count to three", "working", "one two three"]
        assert [text_of(u) for u in theirs] == ["count to three", "working", "one two three"]
        for here, there in zip(mine, theirs, strict=True):
            assert here["messageId"] != there["messageId"]
            assert (here["senderSessionId"], here["recipientSessionId"]) == (
                there["senderSessionId"],
                there["recipientSessionId"],
            )
        assert (mine[0]["senderSessionId"], mine[0]["recipientSessionId"]) == (sid, child)
        assert mine[0]["recipientMessageId"] == theirs[0]["messageId"]
        assert theirs[0]["senderMessageId"] == mine[0]["messageId"]
        assert (mine[1]["senderSessionId"], mine[1]["recipientSessionId"]) == (child, sid)
        assert theirs[1]["recipientMessageId"] == mine[1]["messageId"]
        assert mine[1]["senderMessageId"] == theirs[1]["messageId"]
        # the streamed block goes to both copies, under each copy's own id, without ids
        chunks = [u for u in h.updates() if u["sessionUpdate"] == "session_message_chunk"]
        assert {c["messageId"] for c in chunks} == {mine[1]["messageId"], theirs[1]["messageId"]}
        assert all(text_of(c) == " hard" and "senderSessionId" not in c for c in chunks)
        assert [m.text for m in result.child.parent.inbox] == ["working hard", "one two three"]  # type: ignore[union-attr]
        about = [u for u in h.updates(sid) if u["sessionUpdate"] == "subagent_update"]
        assert about[0]["capabilities"] == {"cancel": {}}  # cancellable while it works
        assert about[-1] == {
            "sessionUpdate": "subagent_update",
            "sessionId": child,
            "capabilities": None,
        }
    found = problems(h)
    assert found == [], "\n".join(found[:10])


async def test_a_message_to_a_session_that_is_neither_parent_nor_child_is_refused() -> None:
    async with agent_harness(delegating_agent([]), validate=False) as h:
        await h.start()
        other = await h.new_session()
        await h.turn(other, "stranger")
        (said,) = [u for u in h.updates(other) if u["sessionUpdate"] == "agent_message_chunk"]
        assert "may message only its parent and its own children" in text_of(said)
        assert not [u for u in h.updates() if u["sessionUpdate"] == "session_message"]


async def test_cancelling_the_parent_cancels_the_delegated_childs_work() -> None:
    results: list[Delegation] = []
    started = anyio.Event()
    agent = make_agent()

    @agent.prompt
    async def handle(turn: Turn) -> str:
        async def forever(sub: Turn, task: str) -> str:
            started.set()
            await anyio.sleep_forever()
            return "never"

        results.append(await turn.delegate("wait", forever))
        return "end_turn"

    async with agent_harness(agent, validate=False) as h:
        sid = await h.start()
        await h.prompt(sid, "go")
        with anyio.fail_after(TIMEOUT):
            await started.wait()
        child = next(u for u in h.updates(sid) if u["sessionUpdate"] == "subagent_update")
        await h.cancel(sid)
        assert (await h.wait_idle(sid))["stopReason"] == "cancelled"
        assert (await h.wait_idle(child["sessionId"]))["stopReason"] == "cancelled"
        assert results == []

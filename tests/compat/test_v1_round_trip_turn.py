"""A v2 turn projected to v1 on the wire and lifted back reduces to the same state,
except for what the projection table says is lost."""

from __future__ import annotations

from typing import Any

import acp2.compat.v1.schema as v1
import acp2.schema as v2
from acp2.compat.v1.lift import MAIN_PLAN_ID, V1Lifter
from acp2.compat.v1.project import V1Projector
from acp2.schema.codec import decode, encode
from acp2.state import SessionState, reduce


def _turn() -> list[Any]:
    read = v2.Content(content=v2.TextContent(text="x = 1"))
    entry = v2.PlanEntry(content="Read a.py", priority="high", status="in_progress")
    return [
        v2.AgentThoughtChunk(message_id="t1", content=v2.TextContent(text="Let me look")),
        v2.PlanUpdate(plan=v2.PlanItems(plan_id="p", entries=[entry])),
        v2.ToolCallUpdate(tool_call_id="c1", title="Read a.py", kind="read", status="pending"),
        v2.ToolCallUpdate(tool_call_id="c1", status="in_progress"),
        v2.ToolCallContentChunk(tool_call_id="c1", content=read),
        v2.ToolCallUpdate(tool_call_id="c1", status="completed", raw_output={"bytes": 5}),
        v2.AgentMessageChunk(message_id="m1", content=v2.TextContent(text="It sets ")),
        v2.AgentMessageChunk(message_id="m1", content=v2.TextContent(text="x.")),
        v2.UsageUpdate(used=10, size=100, cost=v2.Cost(amount=0.1, currency="USD")),
        v2.SessionInfoUpdate(title="Explain a.py"),
    ]


def test_a_turn_survives_projection_to_v1_and_lifting_back() -> None:
    direct = SessionState()
    for update in _turn():
        reduce(direct, update)
    projector, lifter, lifted = V1Projector("s1"), V1Lifter("s1"), SessionState()
    for update in _turn():
        for note in projector.project(update):
            wire = decode(encode(note), v1.SessionNotification)
            for v2_update in lifter.lift(wire):
                reduce(lifted, v2_update)
    assert not projector.dropped
    assert lifted.messages[("thought", "t1")].text == "Let me look"
    assert lifted.messages[("agent", "m1")].text == "It sets x."
    assert lifted.tool_calls["c1"] == direct.tool_calls["c1"]
    assert lifted.plans[MAIN_PLAN_ID].entries == direct.plans["p"].entries
    assert (lifted.usage, lifted.title) == (direct.usage, direct.title)
    assert [type(e).__name__ for e in lifted.timeline] == [
        type(e).__name__ for e in direct.timeline
    ]

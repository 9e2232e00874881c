"""The back bridge's reading of v1 ``session/update`` (``acp2.compat.v1.lift_params``):
it lifts to exactly what the v1 models lift to, with one decode per text chunk."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

import acp2.compat.v1.lift_params as hot
import acp2.compat.v1.schema as v1
import acp2.schema as v2
from acp2.compat.v1.lift import V1Lifter
from acp2.schema.codec import decode, encode

_IMAGE = {"type": "image", "data": "aGk=", "mimeType": "image/png"}
_LINK = {"type": "resource_link", "uri": "file:///a.txt", "name": "a.txt"}
_BAD_PRIORITY = {"type": "text", "text": "x", "annotations": {"priority": 3}}
_NOTED = {"type": "text", "text": "hi", "annotations": {"priority": 0.5}, "_meta": {"k": 1}}
_UPDATES: list[dict[str, Any]] = [
    {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hi"}},
    {"sessionUpdate": "agent_message_chunk", "content": _NOTED, "messageId": "m7"},
    {"sessionUpdate": "agent_message_chunk", "content": _BAD_PRIORITY},
    {"sessionUpdate": "agent_thought_chunk", "content": _IMAGE},
    {"sessionUpdate": "user_message_chunk", "content": _LINK},
    {"sessionUpdate": "agent_message_chunk", "content": {"type": "future_block", "x": 1}},
    {"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Read"},
    {"sessionUpdate": "plan", "entries": []},
    {"sessionUpdate": "some_future_kind", "x": 1},
]


def _lifter() -> V1Lifter:
    counter = itertools.count(1)
    return V1Lifter("s1", new_id=lambda: f"id{next(counter)}")


def _params(update: dict[str, Any]) -> bytes:
    return encode({"sessionId": "s1", "update": update})


@pytest.mark.parametrize("update", _UPDATES, ids=lambda u: str(u["sessionUpdate"]))
def test_every_update_lifts_as_the_v1_models_lift_it(update: dict[str, Any]) -> None:
    by_models = _lifter().lift(decode(_params(update), v1.SessionNotification))
    by_hot = _lifter().lift(decode(_params(update), hot.SessionNotification).update)
    assert [encode(u) for u in by_hot] == [encode(u) for u in by_models]


def test_a_text_chunk_decodes_its_block_as_v2_and_the_lift_hands_that_block_on() -> None:
    note = decode(_params(_UPDATES[0]), hot.SessionNotification)
    assert type(note.update) is hot.AgentMessageChunk
    block = note.update.content
    assert type(block) is v2.TextContent
    (lifted,) = _lifter().lift(note.update)
    assert lifted.content is block


def test_agent_chunk_is_the_one_update_lift_makes_of_an_agent_message_chunk() -> None:
    for update in _UPDATES[:3]:
        note = decode(_params(update), hot.SessionNotification)
        by_lift, by_chunk = _lifter(), _lifter()
        assert by_lift.lift(note.update) == [by_chunk.agent_chunk(note.update)]
        assert by_lift.agent_chunk(note.update) == by_chunk.agent_chunk(note.update)

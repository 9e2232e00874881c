"""``reduce_agent_text``: the streaming client's one-check path for plain agent text
chunks reduces exactly like ``reduce``, and leaves every other chunk to it."""

from __future__ import annotations

from acp2.schema import AgentMessageChunk, ImageContent, TextContent
from acp2.state import SessionState, reduce, reduce_agent_text
from acp2.state.entities import FOLD_CHUNKS


def chunk(text: str, **block: object) -> AgentMessageChunk:
    return AgentMessageChunk(message_id="m1", content=TextContent(text=text, **block))  # type: ignore[arg-type]


def test_plain_text_chunks_reduce_as_reduce_does_across_a_fold() -> None:
    fast, slow = SessionState(), SessionState()
    updates = [chunk(f"t{i} ") for i in range(FOLD_CHUNKS * 2 + 3)]
    for update in updates:
        assert reduce_agent_text(fast, update)
        reduce(slow, update)
    assert fast.messages == slow.messages
    assert fast.agent_text() == slow.agent_text() == "".join(f"t{i} " for i in range(len(updates)))


def test_annotated_meta_and_non_text_chunks_are_left_to_reduce() -> None:
    state = SessionState()
    image = AgentMessageChunk(message_id="m1", content=ImageContent(data="", mime_type="image/png"))
    for update in (chunk("a", meta={"k": 1}), chunk("a", annotations={"priority": 1.0}), image):
        assert not reduce_agent_text(state, update)
    assert state.messages == {}

"""Messages between sessions (Preview ``session_message`` / ``session_message_chunk``):
the state keeps each one, in the timeline, with which sessions it went between, so a UI
can show a parent's task to its child and the child's report back."""

from __future__ import annotations

from typing import Any

from state_updates import OMIT, chunk, decode_update, feed, text

from acp2.schema import TextContent, codec
from acp2.state import ReplayMerge, SessionMessageState, SessionState, reduce


def smsg(message_id: str = "sm1", **fields: Any) -> dict[str, Any]:
    """A ``session_message`` upsert (``OMIT`` leaves a key out)."""
    body = {k: v for k, v in fields.items() if v is not OMIT}
    return {"sessionUpdate": "session_message", "messageId": message_id, **body}


def schunk(value: str, message_id: str = "sm1", **fields: Any) -> dict[str, Any]:
    """A ``session_message_chunk`` appending ``value`` as text."""
    body = {k: v for k, v in fields.items() if v is not OMIT}
    return {
        "sessionUpdate": "session_message_chunk",
        "messageId": message_id,
        "content": text(value),
        **body,
    }


def test_chunks_build_one_timeline_entry_that_names_both_sessions() -> None:
    state = feed(
        chunk("agent", "a1", "Delegating."),
        schunk("Read ", senderSessionId="sess_1", recipientSessionId="sess_child"),
        schunk("the docs"),
    )
    msg = state.messages[("session", "sm1")]
    assert isinstance(msg, SessionMessageState)
    assert state.timeline == [state.messages[("agent", "a1")], msg]
    assert msg.text == "Read the docs"
    assert (msg.sender_session_id, msg.recipient_session_id) == ("sess_1", "sess_child")
    assert state.agent_text() == "Delegating."  # not the agent's own words


def test_a_chunk_sets_ids_it_carries_and_keeps_the_others_even_when_null() -> None:
    state = feed(
        schunk("a", senderSessionId="sess_child", senderMessageId="cm1"),
        schunk("b", senderSessionId=None, recipientSessionId="sess_1"),
    )
    msg = state.messages[("session", "sm1")]
    assert isinstance(msg, SessionMessageState)
    assert (msg.sender_session_id, msg.sender_message_id) == ("sess_child", "cm1")
    assert msg.recipient_session_id == "sess_1"


def test_an_upsert_patches_ids_and_replaces_content_omitted_keeps_null_clears() -> None:
    state = feed(
        schunk("partial", senderSessionId="sess_child", recipientMessageId="pm1"),
        smsg(content=[text("whole")], senderSessionId=OMIT, recipientMessageId=None),
    )
    msg = state.messages[("session", "sm1")]
    assert isinstance(msg, SessionMessageState)
    assert msg.text == "whole"
    assert msg.sender_session_id == "sess_child"  # omitted: kept
    assert msg.recipient_message_id is None  # null: cleared
    feed(smsg(content=None, _meta={"k": 1}), state=state)
    assert msg.content == []
    assert msg.meta == {"k": 1}
    assert len(state.timeline) == 1


def test_session_messages_have_their_own_id_space() -> None:
    state = feed(chunk("agent", "m1", "agent says"), schunk("child says", message_id="m1"))
    assert state.messages[("agent", "m1")].text == "agent says"
    assert state.messages[("session", "m1")].text == "child says"
    assert len(state.timeline) == 2


def test_a_message_made_by_kind_first_becomes_a_session_message_in_place() -> None:
    state = SessionState()
    plain = state.message("session", "sm1")
    plain.append(TextContent(text="x"))
    msg = state.session_message("sm1")
    assert isinstance(msg, SessionMessageState)
    assert msg.text == "x"
    assert state.timeline == [msg]
    assert state.session_message("sm1") is msg


def test_a_chunked_replay_of_a_session_message_rebuilds_it_instead_of_doubling() -> None:
    live = [schunk("Read "), schunk("the docs")]
    state = feed(*live)
    merge = ReplayMerge(state)
    for update in live:
        note = decode_update(update)
        assert merge.absorb(state, note.update)
    merge.finish(state)
    assert state.messages[("session", "sm1")].text == "Read the docs"
    assert len(state.timeline) == 1


def test_a_session_message_round_trips_through_the_state_unchanged() -> None:
    note = decode_update(smsg(content=[text("hi")], senderSessionId="sess_child"))
    state = reduce(SessionState(), note)
    msg = state.messages[("session", "sm1")]
    assert msg.content == [TextContent(text="hi")]
    assert b'"senderSessionId":"sess_child"' in codec.encode(note)

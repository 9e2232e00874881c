"""Property tests: generated v1 patches and chunks round-trip exactly and stay schema-valid."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from v1_testdata import v1_errors

from acp2.compat.v1.methods import METHODS
from acp2.compat.v1.schema import PromptResponse, SessionNotification
from acp2.schema.codec import decode, decode_any, encode

_TEXT = st.text(max_size=40)

#: Each patch field: omitted, ``null`` or a value.
_PATCH_FIELDS: dict[str, st.SearchStrategy[Any]] = {
    "title": _TEXT,
    "kind": st.sampled_from(["read", "edit", "execute", "other"]),
    "status": st.sampled_from(["pending", "in_progress", "completed", "failed"]),
    "content": st.lists(
        st.builds(lambda t: {"type": "content", "content": {"type": "text", "text": t}}, _TEXT),
        max_size=2,
    ),
    "locations": st.lists(st.builds(lambda p: {"path": p}, _TEXT), max_size=2),
}


@st.composite
def _tool_call_updates(draw: st.DrawFn) -> dict[str, Any]:
    update: dict[str, Any] = {"sessionUpdate": "tool_call_update", "toolCallId": draw(_TEXT)}
    for key, values in _PATCH_FIELDS.items():
        choice = draw(st.sampled_from(["absent", "null", "value"]))
        if choice == "null":
            update[key] = None
        elif choice == "value":
            update[key] = draw(values)
    return update


_CHUNKS = st.builds(
    lambda kind, text, mid: {
        "sessionUpdate": kind,
        "content": {"type": "text", "text": text},
        **({} if mid is None else {"messageId": mid}),
    },
    st.sampled_from(["user_message_chunk", "agent_message_chunk", "agent_thought_chunk"]),
    _TEXT,
    st.none() | _TEXT,
)


@settings(max_examples=60, deadline=None)
@given(update=_tool_call_updates() | _CHUNKS)
def test_generated_v1_updates_round_trip_exactly_and_validate(update: dict[str, Any]) -> None:
    notification = {"sessionId": "s", "update": update}
    assert v1_errors(notification, "SessionNotification") == []
    decoded = decode(encode(notification), SessionNotification)
    assert decode_any(encode(decoded)) == notification


@settings(max_examples=30, deadline=None)
@given(
    reason=st.sampled_from(["end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"])
)
def test_every_v1_stop_reason_round_trips(reason: str) -> None:
    result = {"stopReason": reason}
    assert v1_errors(result, "PromptResponse") == []
    decoded = decode(encode(result), METHODS["session/prompt"].result_type)
    assert decoded.stop_reason == reason


def test_unstable_v1_fields_a_real_agent_may_send_are_ignored_not_fatal() -> None:
    raw = b'{"stopReason":"end_turn","usage":{"inputTokens":1,"outputTokens":2,"totalTokens":3}}'
    assert decode(raw, PromptResponse).stop_reason == "end_turn"

"""Property tests: any v2 tool call stream projects to valid v1 frames in create-then-patch
order, and any v1 tool call stream lifts to v2 updates the reducer takes."""

from __future__ import annotations

import base64
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from v1_check import assert_v1_updates, assert_v2

import acp2.compat.v1.schema as v1
import acp2.schema as v2
from acp2.compat.v1.lift import V1Lifter
from acp2.compat.v1.project import V1Projector
from acp2.schema.codec import decode, encode
from acp2.state import SessionState, reduce

_IDS = st.sampled_from(["a", "b", "c"])
_TEXT = st.text(max_size=20)
_ITEMS = st.one_of(
    st.builds(lambda t: v2.Content(content=v2.TextContent(text=t)), _TEXT),
    st.builds(lambda i: v2.Terminal(terminal_id=i), _IDS),
    st.builds(lambda p: v2.Diff(changes=[v2.DiffAddChange(path=f"/w/{p}")]), _IDS),
)
_FIELDS: dict[str, st.SearchStrategy[Any]] = {
    "title": _TEXT,
    "kind": st.sampled_from(["read", "edit", "_browse", "switch_mode"]),
    "status": st.sampled_from(
        ["pending", "in_progress", "completed", "failed", "cancelled", "paused", "_x"]
    ),
    "content": st.lists(_ITEMS, max_size=3),
    "raw_input": st.dictionaries(_TEXT, st.integers(), max_size=2),
    "name": _TEXT,
}


@st.composite
def _v2_update(draw: st.DrawFn) -> Any:
    which = draw(st.sampled_from(["call", "call", "chunk", "terminal"]))
    if which == "terminal":
        data = base64.b64encode(draw(st.binary(max_size=8))).decode()
        return v2.TerminalOutputChunk(terminal_id=draw(_IDS), data=data)
    if which == "chunk":
        return v2.ToolCallContentChunk(tool_call_id=draw(_IDS), content=draw(_ITEMS))
    fields = {}
    for key, values in _FIELDS.items():
        choice = draw(st.sampled_from(["absent", "null", "value"]))
        if choice != "absent":
            fields[key] = None if choice == "null" else draw(values)
    return v2.ToolCallUpdate(tool_call_id=draw(_IDS), **fields)


@settings(max_examples=60, deadline=None)
@given(st.lists(_v2_update(), max_size=12))
def test_any_v2_tool_call_stream_projects_to_valid_v1_created_before_patched(
    updates: list[Any],
) -> None:
    projector = V1Projector("s1")
    seen: set[str] = set()
    for update in updates:
        for out in assert_v1_updates(projector.project(update)):
            created = out["sessionUpdate"] == "tool_call"
            assert created == (out["toolCallId"] not in seen)
            seen.add(out["toolCallId"])


_V1_FIELDS: dict[str, st.SearchStrategy[Any]] = {
    "title": _TEXT,
    "kind": st.sampled_from(["read", "edit", "other"]),
    "status": st.sampled_from(["pending", "in_progress", "completed", "failed"]),
    "content": st.lists(
        st.one_of(
            st.builds(lambda t: {"type": "content", "content": {"type": "text", "text": t}}, _TEXT),
            st.builds(lambda t: {"type": "diff", "path": "/w/a", "newText": t}, _TEXT),
            st.builds(lambda i: {"type": "terminal", "terminalId": i}, _IDS),
        ),
        max_size=2,
    ),
}


@st.composite
def _v1_update(draw: st.DrawFn) -> Any:
    tag = draw(st.sampled_from(["tool_call", "tool_call_update"]))
    update: dict[str, Any] = {"sessionUpdate": tag, "toolCallId": draw(_IDS)}
    if tag == "tool_call":
        update["title"] = draw(_TEXT)
    for key, values in _V1_FIELDS.items():
        choice = draw(st.sampled_from(["absent", "null", "value"]))
        if choice == "value" or (choice == "null" and tag == "tool_call_update"):
            update[key] = None if choice == "null" else draw(values)
    return decode(encode({"sessionId": "s1", "update": update}), v1.SessionNotification)


@settings(max_examples=60, deadline=None)
@given(st.lists(_v1_update(), max_size=12))
def test_any_v1_tool_call_stream_lifts_to_valid_v2_the_reducer_takes(updates: list[Any]) -> None:
    lifter, state = V1Lifter("s1"), SessionState()
    for update in updates:
        for lifted in lifter.lift(update):
            assert_v2(
                v2.UpdateSessionNotification(session_id="s1", update=lifted),
                "UpdateSessionNotification",
            )
            reduce(state, lifted)
    assert set(state.tool_calls) == {u.update.tool_call_id for u in updates}

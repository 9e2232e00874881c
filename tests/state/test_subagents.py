"""Subagents (Preview ``subagent_update``, made baseline v2): the parent's state keeps each
child it announced, patched field by field (omitted keeps, null clears), a tool call keeps
the ``session`` content that names a child, and the model encodes what the Preview's
schema (the TS SDK 2.4.0 unstable definitions) accepts.

Every well-formed update fed here is first validated as a ``session/update`` frame under
Aug, Nov and the Preview (:func:`checked`); the Preview is the newest schema with
``subagent_update``, and no schema has ``session`` content (every draft's fallback)."""

from __future__ import annotations

from typing import Any

import pytest
from state_updates import SESSION, feed

from acp2.schema import SessionReference, SubagentUpdate, UpdateSessionNotification, codec
from acp2.state import SessionState
from schema_validation import validate_frame

CHILD = "sess_child"


def checked(*updates: dict[str, Any]) -> SessionState:
    """:func:`feed` the updates, each first validated under every draft."""
    for update in updates:
        params = {"sessionId": SESSION, "update": update}
        frame = {"jsonrpc": "2.0", "method": "session/update", "params": params}
        for draft in ("aug", "nov", "preview"):
            assert validate_frame(frame, "agent", draft, request_methods={}) == [], draft
    return feed(*updates)


def sub(**fields: Any) -> dict[str, Any]:
    """A ``subagent_update`` for the child ``CHILD``."""
    return {"sessionUpdate": "subagent_update", "sessionId": CHILD, **fields}


def test_the_first_update_announces_the_child_with_its_display_metadata_and_state() -> None:
    state = checked(sub(title="Research", description="reads the docs", state={"state": "running"}))
    child = state.subagents[CHILD]
    assert (child.title, child.description) == ("Research", "reads the docs")
    assert child.state.state == "running"
    assert child.capabilities is None  # unset: the client may do nothing to it
    assert child.cwd is None  # unset: it inherits the parent's
    assert state.unknown == []


def test_later_updates_patch_omitted_fields_keep_and_null_clears() -> None:
    state = checked(
        sub(title="Research", description="reads", cwd="/w", capabilities={"cancel": {}}),
        sub(description=None, state={"state": "idle", "stopReason": "end_turn"}),
    )
    child = state.subagents[CHILD]
    assert child.title == "Research"
    assert child.description is None
    assert child.cwd == "/w"
    assert child.capabilities.cancel is not None
    assert (child.state.state, child.state.stop_reason) == ("idle", "end_turn")


def test_a_null_state_removes_the_report_without_meaning_idle() -> None:
    state = checked(sub(state={"state": "running"}), sub(state=None))
    assert state.subagents[CHILD].state is None
    assert state.foreground == "idle"  # the parent's own state is untouched
    assert state.work == 0


def test_children_are_kept_in_the_order_they_were_announced_and_meta_is_key_patched() -> None:
    state = checked(
        {"sessionUpdate": "subagent_update", "sessionId": "b", "_meta": {"x": 1, "y": 2}},
        {"sessionUpdate": "subagent_update", "sessionId": "a"},
        {"sessionUpdate": "subagent_update", "sessionId": "b", "_meta": {"y": None}},
    )
    assert list(state.subagents) == ["b", "a"]
    assert state.subagents["b"].meta == {"x": 1}


def test_a_malformed_optional_field_is_ignored_and_the_child_still_announced() -> None:
    state = feed(sub(title=7, state={"no": "state"}, title_extra=True))
    child = state.subagents[CHILD]
    assert child.title is None
    assert child.state is None


def test_the_encoded_update_is_valid_under_the_preview_schema() -> None:
    pytest.importorskip("jsonschema")
    from acp2.check.validator import SchemaValidator

    update = SubagentUpdate(session_id=CHILD, title="Research", cwd="/work/repo")
    params = UpdateSessionNotification(session_id="sess_parent", update=update)
    frame = {"jsonrpc": "2.0", "method": "session/update", "params": codec.to_builtins(params)}
    assert SchemaValidator("preview").check_frame(frame, None) is None
    assert codec.decode(codec.encode(params), UpdateSessionNotification).update == update


def test_a_tool_call_keeps_the_session_content_that_names_its_child() -> None:
    reference = {"type": "session", "sessionId": CHILD}
    state = checked(
        sub(title="Research"),
        {"sessionUpdate": "tool_call_update", "toolCallId": "t1", "title": "Delegate"},
        {"sessionUpdate": "tool_call_content_chunk", "toolCallId": "t1", "content": reference},
    )
    assert state.tool_calls["t1"].content == [SessionReference(session_id=CHILD)]
    assert state.unknown == []

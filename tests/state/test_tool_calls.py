"""Tool calls (TC-02..TC-12), permission subjects (PR-03, PR-04) and cancel (PL-15)."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from msgspec import UNSET, Raw
from state_updates import OMIT, feed, state_update, text, tool

from acp2.schema.codec import decode
from acp2.schema.permission import RequestPermissionRequest
from acp2.state import SessionState, ToolCallState, apply_permission_subject, mark_cancelled


def item(value: str) -> dict[str, Any]:
    """A ``content`` tool-call item carrying one text block."""
    return {"type": "content", "content": text(value)}


def content_chunk(tool_call_id: str, value: str, **extra: Any) -> dict[str, Any]:
    """A ``tool_call_content_chunk`` carrying one text item."""
    return {
        "sessionUpdate": "tool_call_content_chunk",
        "toolCallId": tool_call_id,
        "content": item(value),
        **extra,
    }


def item_texts(call: ToolCallState) -> list[str]:
    """The text of each ``content`` item of a tool call."""
    return [c.content.text for c in call.content]


def test_the_first_update_creates_a_pending_other_call_without_title_tc02_tc03() -> None:
    call = feed(tool("c1")).tool_calls["c1"]
    assert (call.title, call.kind, call.status, call.name) == (None, "other", "pending", None)
    assert (call.content, call.locations, call.raw_input, call.raw_output) == ([], [], None, None)
    assert not call.finished


# (case id, successive patches of one field, attribute, expected value)
PATCH_CASES: list[tuple[str, str, list[Any], str, Any]] = [
    ("TC-03 title value", "title", ["Read"], "title", "Read"),
    ("TC-03 title omitted keeps", "title", ["Read", OMIT], "title", "Read"),
    ("TC-03 title null clears", "title", ["Read", None], "title", None),
    ("TC-03 kind value", "kind", ["edit"], "kind", "edit"),
    ("TC-03 kind null resets to other", "kind", ["edit", None], "kind", "other"),
    ("TC-08 an unknown kind is kept", "kind", ["_teleport"], "kind", "_teleport"),
    ("TC-08 switch_mode is accepted", "kind", ["switch_mode"], "kind", "switch_mode"),
    ("TC-03 status value", "status", ["in_progress"], "status", "in_progress"),
    ("TC-03 status null resets to pending", "status", ["completed", None], "status", "pending"),
    ("TC-09 paused is kept", "status", ["paused"], "status", "paused"),
    ("TC-09 an unknown status is kept", "status", ["_queued"], "status", "_queued"),
    ("TC-03 rawInput object", "rawInput", [{"path": "/a"}], "raw_input", {"path": "/a"}),
    ("TC-03 rawInput null clears", "rawInput", [{"p": 1}, None], "raw_input", None),
    ("TC-03 rawInput omitted keeps", "rawInput", [[1, 2], OMIT], "raw_input", [1, 2]),
    ("TC-03 rawInput scalar", "rawInput", ["ls -la"], "raw_input", "ls -la"),
    ("TC-03 rawOutput value", "rawOutput", [{"ok": True}], "raw_output", {"ok": True}),
    ("TC-03 rawOutput null clears", "rawOutput", [{"ok": True}, None], "raw_output", None),
    ("D-22 name value", "name", ["read_file"], "name", "read_file"),
    ("D-22 name null clears", "name", ["read_file", None], "name", None),
    ("D-22 name omitted keeps", "name", ["read_file", OMIT], "name", "read_file"),
    ("TC-04 meta key patch", "meta", [{"a": 1}, {"b": 2}], "meta", {"a": 1, "b": 2}),
    ("TC-04 meta null key deletes", "meta", [{"a": 1, "b": 2}, {"a": None}], "meta", {"b": 2}),
    ("TC-04 meta null clears", "meta", [{"a": 1}, None], "meta", None),
    ("TC-04 meta omitted keeps", "meta", [{"a": 1}, OMIT], "meta", {"a": 1}),
]


@pytest.mark.parametrize(
    ("field", "values", "attr", "expected"),
    [c[1:] for c in PATCH_CASES],
    ids=[c[0] for c in PATCH_CASES],
)
def test_tool_call_fields_follow_the_patch_rule(
    field: str, values: list[Any], attr: str, expected: Any
) -> None:
    state = feed(*[tool("c1", **{field: value}) for value in values])
    assert getattr(state.tool_calls["c1"], attr) == expected


def test_capabilities_are_replaced_whole_and_cleared_by_null_d22() -> None:
    state = feed(tool("c1", capabilities={"cancel": {}}))
    assert state.tool_calls["c1"].capabilities.cancel is not UNSET
    feed(tool("c1", capabilities={}), state=state)
    assert state.tool_calls["c1"].capabilities.cancel is UNSET
    feed(tool("c1", capabilities=None), state=state)
    assert state.tool_calls["c1"].capabilities is None


# (case id, updates for "c1", expected content texts)
CONTENT_CASES: list[tuple[str, list[dict[str, Any]], list[str]]] = [
    ("TC-03 content value", [tool("c1", content=[item("a")])], ["a"]),
    ("TC-03 content [] clears", [tool("c1", content=[item("a")]), tool("c1", content=[])], []),
    ("TC-03 content null clears", [tool("c1", content=[item("a")]), tool("c1", content=None)], []),
    (
        "TC-03 content omitted keeps",
        [tool("c1", content=[item("a")]), tool("c1", status="completed")],
        ["a"],
    ),
    (
        "TC-05 chunks append",
        [tool("c1"), content_chunk("c1", "a"), content_chunk("c1", "b")],
        ["a", "b"],
    ),
    (
        "TC-05 chunk X update Y chunk Z gives Y Z",
        [content_chunk("c1", "X"), tool("c1", content=[item("Y")]), content_chunk("c1", "Z")],
        ["Y", "Z"],
    ),
    (
        "TC-05 an update without content keeps chunk content",
        [tool("c1", content=[item("A")]), content_chunk("c1", "B"), tool("c1", status="failed")],
        ["A", "B"],
    ),
    (
        "TC-05 chunk meta is chunk-scoped",
        [tool("c1", meta={"k": 1}), content_chunk("c1", "a", _meta={"x": 1})],
        ["a"],
    ),
]


@pytest.mark.parametrize(
    ("updates", "expected"), [c[1:] for c in CONTENT_CASES], ids=[c[0] for c in CONTENT_CASES]
)
def test_tool_call_content_replaces_and_appends_in_order(
    updates: list[dict[str, Any]], expected: list[str]
) -> None:
    call = feed(*updates).tool_calls["c1"]
    assert item_texts(call) == expected


def test_chunk_meta_does_not_patch_the_tool_call_tc05() -> None:
    state = feed(tool("c1", meta={"k": 1}), content_chunk("c1", "a", _meta={"x": 1}))
    assert state.tool_calls["c1"].meta == {"k": 1}


def test_a_chunk_for_an_unseen_call_creates_it() -> None:
    state = feed(content_chunk("c9", "early"))
    assert state.tool_calls["c9"].status == "pending"
    assert state.timeline == [state.tool_calls["c9"]]


# (case id, locations sent, expected (path, line) pairs)
LOCATION_CASES: list[tuple[str, Any, list[tuple[str, Any]]]] = [
    ("TC-10 a line is kept", [{"path": "/a", "line": 3}], [("/a", 3)]),
    ("TC-10 line 0 is no line", [{"path": "/a", "line": 0}], [("/a", None)]),
    ("TC-10 no line", [{"path": "/a"}], [("/a", UNSET)]),
    ("TC-03 locations [] clears", [], []),
    ("TC-03 locations null clears", None, []),
]


@pytest.mark.parametrize(
    ("locations", "expected"),
    [c[1:] for c in LOCATION_CASES],
    ids=[c[0] for c in LOCATION_CASES],
)
def test_locations_are_replaced_whole(locations: Any, expected: list[tuple[str, Any]]) -> None:
    state = feed(
        tool("c1", locations=[{"path": "/old", "line": 9}]), tool("c1", locations=locations)
    )
    assert [(loc.path, loc.line) for loc in state.tool_calls["c1"].locations] == expected


def test_locations_omitted_keep_the_old_ones() -> None:
    state = feed(tool("c1", locations=[{"path": "/a", "line": 1}]), tool("c1", title="t"))
    assert [loc.path for loc in state.tool_calls["c1"].locations] == ["/a"]


def test_unknown_content_items_are_kept_raw_tc12() -> None:
    state = feed(tool("c1", content=[{"type": "_chart", "points": [1]}, item("a")]))
    first, second = state.tool_calls["c1"].content
    assert isinstance(first, Raw)
    assert msgspec.json.decode(first) == {"type": "_chart", "points": [1]}
    assert second.content.text == "a"


def test_tool_calls_join_the_timeline_once_in_first_seen_order() -> None:
    state = feed(tool("c1"), tool("c2"), tool("c1", status="completed"))
    assert [e.tool_call_id for e in state.timeline if isinstance(e, ToolCallState)] == ["c1", "c2"]


def test_updates_while_idle_apply_and_keep_the_state_idle_pl12_tc11() -> None:
    state = feed(state_update("running"), state_update("idle", stopReason="end_turn"))
    feed(tool("bg", status="in_progress"), content_chunk("bg", "tick"), state=state)
    assert state.foreground == "idle"
    assert not state.busy
    assert state.tool_calls["bg"].status == "in_progress"
    assert state.completed == 1


# -- permission subjects (PR-04) ---------------------------------------------------------


def permission(subject: Any) -> RequestPermissionRequest:
    """Decode a permission request carrying ``subject`` (OMIT leaves it out)."""
    params: dict[str, Any] = {
        "sessionId": "sess_1",
        "title": "Allow writing?",
        "options": [{"optionId": "ok", "name": "Allow", "kind": "allow_once"}],
    }
    if subject is not OMIT:
        params["subject"] = subject
    return decode(msgspec.json.encode(params), RequestPermissionRequest)


def test_a_tool_call_subject_patches_the_call_like_an_update_pr04() -> None:
    state = feed(tool("c1", title="Write file", kind="edit", content=[item("a")]))
    subject = {
        "type": "tool_call",
        "toolCall": {"toolCallId": "c1", "status": "in_progress", "rawInput": {"path": "/x"}},
    }
    assert apply_permission_subject(state, permission(subject).subject) is state
    call = state.tool_calls["c1"]
    assert (call.title, call.kind, call.status) == ("Write file", "edit", "in_progress")
    assert call.raw_input == {"path": "/x"}
    assert item_texts(call) == ["a"]


def test_a_tool_call_subject_with_an_unseen_id_creates_the_call_pr04() -> None:
    state = SessionState()
    subject = {"type": "tool_call", "toolCall": {"toolCallId": "new", "title": "Run"}}
    apply_permission_subject(state, permission(subject).subject)
    assert state.tool_calls["new"].title == "Run"
    assert state.timeline == [state.tool_calls["new"]]


def test_the_permission_title_is_not_copied_onto_the_call_pr03() -> None:
    state = feed(tool("c1", title="Write file"))
    subject = {"type": "tool_call", "toolCall": {"toolCallId": "c1"}}
    apply_permission_subject(state, permission(subject).subject)
    assert state.tool_calls["c1"].title == "Write file"


@pytest.mark.parametrize(
    "subject",
    [
        OMIT,
        None,
        {"type": "command", "command": "rm -rf build", "cwd": "/p", "toolCallId": "c1"},
        {"type": "_future", "x": 1},
    ],
    ids=["omitted", "null", "command", "unknown"],
)
def test_other_subjects_change_nothing_pr04(subject: Any) -> None:
    state = feed(tool("c1", title="t"))
    before = (list(state.timeline), state.tool_calls["c1"].status)
    apply_permission_subject(state, permission(subject).subject)
    assert (state.timeline, state.tool_calls["c1"].status) == before


# -- cancel (PL-15) ----------------------------------------------------------------------


def test_cancel_marks_only_unfinished_calls_of_the_current_work_pl15() -> None:
    state = feed(
        state_update("running"),
        tool("old", status="in_progress"),
        state_update("idle", stopReason="end_turn"),
        tool("while_idle", status="in_progress"),
        state_update("running"),
        tool("done", status="completed"),
        tool("failed", status="failed"),
        tool("pending"),
        tool("running", status="in_progress"),
        tool("paused", status="paused"),
        tool("custom", status="_queued"),
    )
    assert mark_cancelled(state) == ["pending", "running", "paused", "custom"]
    statuses = {k: c.status for k, c in state.tool_calls.items()}
    assert statuses == {
        "old": "in_progress",
        "while_idle": "in_progress",
        "done": "completed",
        "failed": "failed",
        "pending": "cancelled",
        "running": "cancelled",
        "paused": "cancelled",
        "custom": "cancelled",
    }


def test_cancel_leaves_listed_background_calls_alone_d15() -> None:
    state = feed(
        state_update("running", background=[]),
        tool("fg", status="in_progress"),
        tool("bg", status="in_progress"),
        state_update("running", background=[{"type": "tool_call", "toolCallId": "bg"}]),
    )
    assert mark_cancelled(state) == ["fg"]
    assert state.tool_calls["bg"].status == "in_progress"


def test_cancel_while_idle_changes_nothing() -> None:
    state = feed(tool("c1", status="in_progress"))
    assert mark_cancelled(state) == []
    assert state.tool_calls["c1"].status == "in_progress"


def test_updates_after_cancel_still_apply_pl21() -> None:
    state = feed(state_update("running"), tool("c1", status="in_progress"))
    mark_cancelled(state)
    feed(tool("c1", status="completed"), state_update("idle", stopReason="cancelled"), state=state)
    assert state.tool_calls["c1"].status == "completed"
    assert state.stop_reason == "cancelled"

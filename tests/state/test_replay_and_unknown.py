"""Replay equivalence (SS resume, TM-09), unknown updates (EX-07, EX-12) and entry points."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from msgspec import Raw
from state_updates import b64, chunk, decode_update, feed, message, state_update, text, tool

from acp2.schema.codec import encode
from acp2.state import SessionState, reduce

TERMINAL = {"type": "terminal", "terminalId": "t1"}
DONE = {"type": "content", "content": text("done")}
PLAN_ITEMS = [{"content": "run tests", "priority": "high", "status": "completed"}]


def plan(status: str) -> dict[str, Any]:
    items = [dict(PLAN_ITEMS[0], status=status)]
    return {
        "sessionUpdate": "plan_update",
        "plan": {"type": "items", "planId": "p1", "entries": items},
    }


def terminal(**fields: Any) -> dict[str, Any]:
    return {"sessionUpdate": "terminal_update", "terminalId": "t1", **fields}


LIVE: list[dict[str, Any]] = [
    message("user", "u1", ["run the tests"]),
    state_update("running"),
    chunk("thought", "m1", "let me "),
    chunk("thought", "m1", "check"),
    plan("pending"),
    chunk("agent", "m1", "Running"),
    chunk("agent", "m1", " tests."),
    tool("c1", title="pytest", kind="execute", status="pending"),
    terminal(command="pytest -q", cwd="/p"),
    tool("c1", status="in_progress", content=[TERMINAL]),
    {"sessionUpdate": "terminal_output_chunk", "terminalId": "t1", "data": b64(b"caf\xc3")},
    {"sessionUpdate": "terminal_output_chunk", "terminalId": "t1", "data": b64(b"\xa9 ok\n")},
    terminal(exitStatus={"exitCode": 0}),
    {"sessionUpdate": "tool_call_content_chunk", "toolCallId": "c1", "content": DONE},
    tool("c1", status="completed"),
    plan("completed"),
    chunk("agent", "m2", "All "),
    chunk("agent", "m2", "good."),
    {"sessionUpdate": "usage_update", "used": 900, "size": 8000},
    {"sessionUpdate": "session_info_update", "title": "Run tests"},
    state_update("idle", stopReason="end_turn"),
]

REPLAY: list[dict[str, Any]] = [
    message("user", "u1", ["run the tests"]),
    {
        "sessionUpdate": "agent_thought",
        "messageId": "m1",
        "content": [text("let me check")],
    },
    plan("completed"),
    {
        "sessionUpdate": "agent_message",
        "messageId": "m1",
        "content": [text("Running tests.")],
    },
    tool("c1", title="pytest", kind="execute", status="completed", content=[TERMINAL, DONE]),
    terminal(
        command="pytest -q",
        cwd="/p",
        output={"data": b64("café ok\n".encode())},
        exitStatus={"exitCode": 0},
    ),
    {"sessionUpdate": "agent_message", "messageId": "m2", "content": [text("All good.")]},
    {"sessionUpdate": "usage_update", "used": 900, "size": 8000},
    {"sessionUpdate": "session_info_update", "title": "Run tests"},
    state_update("idle"),
]


def rendered(state: SessionState) -> tuple[Any, ...]:
    """Everything a UI shows for the session's history."""
    terminals = {k: (t, t.text) for k, t in state.terminals.items()}
    return (
        state.timeline,
        state.messages,
        state.tool_calls,
        terminals,
        state.plans,
        state.usage,
        state.title,
        state.foreground,
        state.agent_text(),
    )


def test_replayed_history_reduces_to_the_live_state() -> None:
    live, replay = feed(*LIVE), feed(*REPLAY)
    assert rendered(live) == rendered(replay)
    assert live.agent_text() == "Running tests.\n\nAll good."
    assert live.terminals["t1"].text == "café ok\n"


def test_replaying_the_live_stream_twice_into_fresh_states_is_deterministic() -> None:
    assert rendered(feed(*LIVE)) == rendered(feed(*LIVE))


# -- unknown updates and values ---------------------------------------------------------

UNKNOWN: list[dict[str, Any]] = [
    {"sessionUpdate": "_acme_progress", "percent": 50},
    {"sessionUpdate": "future_kind", "x": [1, {"y": None}]},
    {"sessionUpdate": "plan", "entries": []},
]


def test_unknown_update_kinds_are_kept_raw_in_arrival_order_ex07() -> None:
    state = feed(UNKNOWN[0], chunk("agent", "m1", "hi"), UNKNOWN[1], UNKNOWN[2])
    assert all(isinstance(u, Raw) for u in state.unknown)
    assert [msgspec.json.decode(u) for u in state.unknown] == UNKNOWN
    assert state.messages[("agent", "m1")].text == "hi"


def test_unknown_updates_re_encode_byte_for_byte_ex07() -> None:
    wire = b'{"sessionUpdate":"_x","b":1,"a":[true,null]}'
    state = feed({"sessionUpdate": "_x", "b": 1, "a": [True, None]})
    assert encode(state.unknown[0]) == wire


def test_unknown_updates_do_not_touch_the_foreground_state() -> None:
    state = feed(state_update("running"), *UNKNOWN)
    assert (state.foreground, state.work) == ("running", 1)


# -- entry points ------------------------------------------------------------------------


def test_reduce_accepts_a_bare_update_variant() -> None:
    state = SessionState()
    note = decode_update(chunk("agent", "m1", "x"))
    assert reduce(state, note.update) is state
    assert state.session_id is None
    assert state.messages[("agent", "m1")].text == "x"


def test_reduce_records_the_session_id_of_the_first_notification() -> None:
    state = feed(chunk("agent", "m1", "x"))
    assert state.session_id == "sess_1"


@pytest.mark.parametrize("value", [None, {"sessionUpdate": "agent_message_chunk"}, "x"])
def test_reduce_refuses_values_that_are_not_updates(value: Any) -> None:
    with pytest.raises(TypeError, match="not a session update"):
        reduce(SessionState(), value)


@pytest.mark.parametrize("draft", ["aug", "nov"])
def test_the_replay_fixtures_are_valid_wire_updates(draft: str) -> None:
    from schema_validation import draft_schema

    schema = draft_schema(draft)
    problems = [
        p
        for i, update in enumerate(LIVE + REPLAY)
        for p in schema.check("SessionUpdate", update, f"update[{i}]")
    ]
    assert problems == []

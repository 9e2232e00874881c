"""Foreground state, stop reasons and background work (PL-07, PL-10, PL-11, PL-24, PL-25)."""

from __future__ import annotations

from typing import Any

import pytest
from msgspec import Raw
from state_updates import feed, state_update

from acp2.schema.states import BackgroundTerminal, BackgroundToolCall
from acp2.state import SessionState

RUN = state_update("running")
BLOCKED = state_update("requires_action")


def idle(reason: Any = None, **fields: Any) -> dict[str, Any]:
    """An idle snapshot, with ``stopReason`` when ``reason`` is given."""
    if reason is not None:
        fields["stopReason"] = reason
    return state_update("idle", **fields)


def test_a_new_session_is_idle_d14() -> None:
    state = SessionState()
    assert (state.foreground, state.busy, state.stop_reason, state.work, state.completed) == (
        "idle",
        False,
        None,
        0,
        0,
    )


# (case id, updates, expected (foreground, busy, stop_reason, work, completed))
FOREGROUND_CASES: list[tuple[str, list[dict[str, Any]], tuple[Any, ...]]] = [
    ("PL-06 running is busy", [RUN], ("running", True, None, 1, 0)),
    ("PL-07 idle ends the work", [RUN, idle("end_turn")], ("idle", False, "end_turn", 1, 1)),
    ("PL-09 requires_action is busy", [RUN, BLOCKED], ("requires_action", True, None, 1, 0)),
    (
        "PL-09 permission round trip is one piece of work",
        [RUN, BLOCKED, RUN, idle("end_turn")],
        ("idle", False, "end_turn", 1, 1),
    ),
    ("PL-06 work may start blocked", [BLOCKED], ("requires_action", True, None, 1, 0)),
    ("PL-11 an unknown state is busy", [state_update("paused_x")], ("paused_x", True, None, 1, 0)),
    (
        "PL-11 a custom state is kept and busy",
        [RUN, state_update("_compacting")],
        ("_compacting", True, None, 1, 0),
    ),
    (
        "PL-24 a duplicate idle is not a new turn",
        [RUN, idle("end_turn"), idle("end_turn")],
        ("idle", False, "end_turn", 1, 1),
    ),
    ("PL-24 a duplicate running is not new work", [RUN, RUN], ("running", True, None, 1, 0)),
    (
        "PL-24 two turns count twice",
        [RUN, idle("end_turn"), RUN, idle("max_tokens")],
        ("idle", False, "max_tokens", 2, 2),
    ),
    (
        "PL-24 a repeated idle without a reason keeps the last one",
        [RUN, idle("refusal"), idle()],
        ("idle", False, "refusal", 1, 1),
    ),
    ("PL-10 idle without a stop reason", [RUN, idle()], ("idle", False, None, 1, 1)),
    ("PL-10 a custom stop reason is kept", [RUN, idle("_quota")], ("idle", False, "_quota", 1, 1)),
    (
        "PL-10 an unknown stop reason is kept",
        [RUN, idle("future_y")],
        ("idle", False, "future_y", 1, 1),
    ),
    (
        "PL-10 a null stop reason is not reported",
        [RUN, idle(stopReason=None)],
        ("idle", False, None, 1, 1),
    ),
    (
        "PL-10 a malformed stop reason is not reported",
        [RUN, idle(stopReason=42)],
        ("idle", False, None, 1, 1),
    ),
    (
        "PL-07 a new piece of work forgets nothing until it ends",
        [RUN, idle("cancelled"), RUN],
        ("running", True, "cancelled", 2, 1),
    ),
    (
        "PL-07 work ending without a reason drops the previous one",
        [RUN, idle("end_turn"), RUN, idle()],
        ("idle", False, None, 2, 2),
    ),
    ("D-14 an idle snapshot on a new session", [idle()], ("idle", False, None, 0, 0)),
]


@pytest.mark.parametrize(
    ("updates", "expected"),
    [c[1:] for c in FOREGROUND_CASES],
    ids=[c[0] for c in FOREGROUND_CASES],
)
def test_foreground_state_follows_state_update_snapshots(
    updates: list[dict[str, Any]], expected: tuple[Any, ...]
) -> None:
    state = feed(*updates)
    got = (state.foreground, state.busy, state.stop_reason, state.work, state.completed)
    assert got == expected


def test_an_error_stop_reason_keeps_the_error_object_pl10() -> None:
    state = feed(RUN, idle("error", error={"code": -32603, "message": "model failed"}))
    assert state.stop_reason == "error"
    assert (state.error.code, state.error.message) == (-32603, "model failed")
    feed(RUN, idle("end_turn"), state=state)
    assert state.error is None


# (case id, background field or OMIT-like marker, expected)
BACKGROUND_CASES: list[tuple[str, dict[str, Any], Any]] = [
    ("PL-25 omitted is not reported", {}, None),
    ("PL-25 null is not reported", {"background": None}, None),
    ("PL-25 [] is none", {"background": []}, []),
]


@pytest.mark.parametrize(
    ("fields", "expected"),
    [c[1:] for c in BACKGROUND_CASES],
    ids=[c[0] for c in BACKGROUND_CASES],
)
def test_background_is_a_complete_snapshot_or_not_reported(
    fields: dict[str, Any], expected: Any
) -> None:
    state = feed(state_update("running", background=[{"type": "terminal", "terminalId": "t"}]))
    feed(state_update("idle", **fields), state=state)
    assert state.background == expected


def test_background_items_of_every_type_are_kept_pl25() -> None:
    items = [
        {"type": "terminal", "terminalId": "t1"},
        {"type": "tool_call", "toolCallId": "c1"},
        {"type": "_job", "id": 7},
    ]
    state = feed(idle(background=items))
    terminal, call, custom = state.background or []
    assert isinstance(terminal, BackgroundTerminal)
    assert terminal.terminal_id == "t1"
    assert isinstance(call, BackgroundToolCall)
    assert call.tool_call_id == "c1"
    assert isinstance(custom, Raw)
    assert not state.busy

"""The prompt-lifecycle foreground state machine (PL-06, PL-07, PL-09, PL-10, PL-24)."""

from __future__ import annotations

import pytest

from acp2.errors import LocalProtocolError
from acp2.lifecycle import (
    EVENTS,
    STATES,
    STOP_REASONS,
    TRANSITIONS,
    ForegroundMachine,
    is_custom,
    is_known_stop_reason,
)

LEGAL = [
    ("idle", "start", "running"),
    ("idle", "block", "requires_action"),
    ("running", "block", "requires_action"),
    ("running", "stop", "idle"),
    ("requires_action", "unblock", "running"),
    ("requires_action", "stop", "idle"),
]
ILLEGAL = [
    (state, event)
    for state in sorted(STATES)
    for event in sorted(EVENTS)
    if (state, event) not in {(s, e) for s, e, _ in LEGAL}
]


def test_the_table_covers_exactly_the_standard_states_and_events() -> None:
    assert set(TRANSITIONS) == STATES == {"idle", "running", "requires_action"}
    assert {"start", "block", "unblock", "stop"} == EVENTS
    for targets in TRANSITIONS.values():
        assert set(targets) <= EVENTS
        assert set(targets.values()) <= STATES


def test_the_table_cannot_be_mutated() -> None:
    with pytest.raises(TypeError):
        TRANSITIONS["idle"]["stop"] = "idle"  # type: ignore[index]


@pytest.mark.parametrize(("state", "event", "target"), LEGAL)
def test_a_legal_event_moves_to_the_table_target(state: str, event: str, target: str) -> None:
    machine = ForegroundMachine(state)
    assert machine.can(event)
    assert machine.apply(event) == target
    assert machine.state == target


@pytest.mark.parametrize(("state", "event"), ILLEGAL)
def test_an_illegal_event_raises_and_changes_nothing(state: str, event: str) -> None:
    machine = ForegroundMachine(state)
    assert not machine.can(event)
    with pytest.raises(LocalProtocolError):
        machine.apply(event)
    assert machine.state == state


def test_a_new_machine_starts_idle_and_not_busy_d14() -> None:
    machine = ForegroundMachine()
    assert machine.state == "idle"
    assert not machine.busy


def test_a_non_standard_initial_state_is_refused() -> None:
    with pytest.raises(ValueError, match="paused"):
        ForegroundMachine("_paused")


def test_a_permission_round_trip_goes_requires_action_then_running_pl09() -> None:
    machine = ForegroundMachine()
    seen = [machine.apply(e) for e in ("start", "block", "unblock", "stop")]
    assert seen == ["running", "requires_action", "running", "idle"]


def test_exactly_one_idle_ends_each_piece_of_work_pl07_pl24() -> None:
    machine = ForegroundMachine()
    machine.apply("start")
    machine.apply("stop")
    with pytest.raises(LocalProtocolError):
        machine.apply("stop")


def test_requires_action_is_only_left_for_running_or_idle_pl09() -> None:
    assert set(TRANSITIONS["requires_action"].values()) == {"running", "idle"}


def test_work_may_start_already_blocked_pl06() -> None:
    machine = ForegroundMachine()
    assert machine.apply("block") == "requires_action"
    assert machine.busy


def test_a_second_start_while_running_is_illegal() -> None:
    machine = ForegroundMachine("running")
    with pytest.raises(LocalProtocolError, match="start"):
        machine.apply("start")


def test_the_machine_repr_names_its_state() -> None:
    assert repr(ForegroundMachine("running")) == "ForegroundMachine(state='running')"


@pytest.mark.parametrize(
    "reason", ["end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled", "error"]
)
def test_every_schema_stop_reason_is_known_pl10(reason: str) -> None:
    assert reason in STOP_REASONS
    assert is_known_stop_reason(reason)
    assert not is_custom(reason)


@pytest.mark.parametrize(("value", "custom"), [("_quota", True), ("future_y", False), ("", False)])
def test_only_underscore_values_are_custom_ex06(value: str, custom: bool) -> None:
    assert is_custom(value) is custom
    assert not is_known_stop_reason(value)

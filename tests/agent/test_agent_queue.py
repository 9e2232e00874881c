"""The prompt queue as a pure state machine: every transition, without an event loop
(PL-18, PL-22, SS-22)."""

from __future__ import annotations

from collections.abc import Callable
from typing import get_args

import pytest

from acp2.agent.queue import (
    TRANSITIONS,
    PromptQueue,
    QueueEvent,
    SlotState,
    Ticket,
)
from acp2.errors import LocalProtocolError

STATES: tuple[SlotState, ...] = get_args(SlotState)
EVENTS: tuple[QueueEvent, ...] = get_args(QueueEvent)


def _in(state: SlotState) -> tuple[PromptQueue, Ticket | None]:
    """A queue driven into ``state`` through its public methods, and the ticket the slot
    was handed to (for ``handoff`` / ``withdrawn``)."""
    queue = PromptQueue()
    granted = None
    if state != "free":
        queue.acquire()
    if state == "cancelling":
        queue.cancel()
    if state in ("handoff", "withdrawn"):
        queue.acquire()
        granted = queue.release()
    if state == "withdrawn":
        queue.cancel()
    assert queue.state == state
    return queue, granted


def _fire(queue: PromptQueue, granted: Ticket | None, event: QueueEvent) -> None:
    """Make ``queue`` take ``event`` through the public method that causes it."""
    actions: dict[QueueEvent, Callable[[], object]] = {
        "acquire": queue.acquire,
        "hold": queue.acquire,
        "cancel": queue.cancel,
        "release": queue.release,
        "take": lambda: queue.take(granted) if granted else None,
        "abandon": lambda: queue.abandon(queue.acquire()),
    }
    if event == "hand_over":
        queue.acquire()
        queue.release()
        return
    actions[event]()


LEGAL = [(s, e, t) for s, targets in TRANSITIONS.items() for e, t in targets.items()]
ILLEGAL = [(s, e) for s in STATES for e in EVENTS if e not in TRANSITIONS[s]]


def test_the_table_covers_exactly_the_slot_states_and_events() -> None:
    assert set(TRANSITIONS) == set(STATES)
    for targets in TRANSITIONS.values():
        assert set(targets) <= set(EVENTS)
        assert set(targets.values()) <= set(STATES)
    assert {e for targets in TRANSITIONS.values() for e in targets} == set(EVENTS)


def test_the_table_cannot_be_mutated() -> None:
    with pytest.raises(TypeError):
        TRANSITIONS["free"]["release"] = "free"  # type: ignore[index]


@pytest.mark.parametrize(("state", "event", "target"), LEGAL)
def test_a_legal_move_goes_to_the_table_target(
    state: SlotState, event: QueueEvent, target: SlotState
) -> None:
    queue, granted = _in(state)
    assert queue.can(event)
    _fire(queue, granted, event)
    assert queue.state == target


@pytest.mark.parametrize(("state", "event"), ILLEGAL)
def test_an_illegal_move_is_refused(state: SlotState, event: QueueEvent) -> None:
    queue, _ = _in(state)
    assert not queue.can(event)


@pytest.mark.parametrize("state", ["free", "handoff"])
def test_a_release_nobody_owns_raises_and_changes_nothing(state: SlotState) -> None:
    queue, _ = _in(state)
    with pytest.raises(LocalProtocolError):
        queue.release()
    assert queue.state == state


def test_a_free_slot_is_owned_at_once() -> None:
    queue = PromptQueue()
    assert queue.acquire().running
    assert queue.state == "working"


def test_pl22_held_tickets_get_the_slot_in_arrival_order() -> None:
    queue = PromptQueue()
    queue.acquire()
    first, second = queue.acquire(), queue.acquire()
    assert (first.status, second.status, queue.held) == ("held", "held", 2)
    assert queue.release() is first
    assert queue.take(first) is None
    assert first.running
    assert queue.release() is second
    queue.take(second)
    assert queue.release() is None
    assert queue.state == "free"


def test_pl18_cancel_withdraws_held_tickets_and_marks_the_work_cancelling() -> None:
    queue = PromptQueue()
    queue.acquire()
    held = queue.acquire()
    running, woken = queue.cancel()
    assert running
    assert woken == [held]
    assert held.status == "withdrawn"
    assert queue.cancel_requested
    assert queue.take(held) is None  # its task wakes and learns it was withdrawn
    assert queue.release() is None
    assert not queue.cancel_requested


def test_pl18_cancel_right_after_the_hand_over_revokes_that_ticket() -> None:
    queue = PromptQueue()
    queue.acquire()
    granted = queue.acquire()
    later = queue.acquire()
    assert queue.release() is granted
    running, woken = queue.cancel()
    assert not running  # its work has not started: withdrawing it is the cancellation
    assert woken == [later]
    assert granted.status == "revoked"
    assert queue.take(granted) is None  # nothing else held: the slot is free again
    assert granted.status == "withdrawn"
    assert queue.state == "free"


def test_a_revoked_ticket_passes_the_slot_to_a_prompt_held_after_the_cancel() -> None:
    queue, granted = _in("withdrawn")
    newcomer = queue.acquire()
    assert granted is not None
    assert queue.take(granted) is newcomer
    assert newcomer.status == "granted"
    assert queue.state == "handoff"


def test_an_abandoned_held_ticket_leaves_the_queue() -> None:
    queue = PromptQueue()
    queue.acquire()
    ticket = queue.acquire()
    assert queue.abandon(ticket) is None
    assert queue.held == 0
    assert ticket.status == "withdrawn"
    assert queue.release() is None


def test_an_abandoned_granted_ticket_passes_the_slot_on() -> None:
    queue = PromptQueue()
    queue.acquire()
    granted, next_one = queue.acquire(), queue.acquire()
    queue.release()
    assert queue.abandon(granted) is next_one
    assert queue.state == "handoff"
    queue.take(next_one)
    assert queue.release() is None
    assert queue.state == "free"


def test_an_abandoned_revoked_ticket_frees_the_slot() -> None:
    queue, granted = _in("withdrawn")
    assert granted is not None
    assert queue.abandon(granted) is None
    assert queue.state == "free"


def test_ss22_a_closing_queue_refuses_every_later_prompt() -> None:
    queue = PromptQueue()
    queue.acquire()
    running, _ = queue.close()
    assert running
    assert queue.closing
    assert queue.acquire().status == "refused"
    queue.release()
    assert queue.acquire().status == "refused"


def test_the_queue_module_imports_no_event_loop() -> None:
    import ast
    from pathlib import Path

    import acp2.agent.queue as module

    tree = ast.parse(Path(module.__file__).read_text())
    roots = {
        (node.module if isinstance(node, ast.ImportFrom) else alias.name).split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
        if not isinstance(node, ast.ImportFrom) or node.module
    }
    assert not roots & {"asyncio", "anyio", "trio", "socket", "selectors"}

"""Reconnect pacing: exponential growth with equal jitter, bounded by attempts and time,
with the clock and the random source injected."""

from __future__ import annotations

import itertools

import pytest

from acp2.transport.backoff import Backoff


def test_delays_double_up_to_the_cap_with_the_lowest_jitter() -> None:
    backoff = Backoff(initial=1, factor=2, max_delay=8, max_attempts=6, random=lambda: 0.0)
    assert list(backoff.delays()) == [0.5, 1, 2, 4, 4, 4]


def test_the_highest_jitter_waits_the_whole_planned_delay() -> None:
    backoff = Backoff(initial=1, factor=3, max_delay=100, max_attempts=3, random=lambda: 1.0)
    assert list(backoff.delays()) == [1, 3, 9]


def test_jitter_spreads_each_delay_between_half_and_all_of_it() -> None:
    draws = itertools.cycle([0.0, 0.5, 1.0])
    backoff = Backoff(initial=4, factor=1, max_attempts=3, random=lambda: next(draws))
    assert list(backoff.delays()) == [2.0, 3.0, 4.0]


def test_attempts_stop_once_the_time_bound_is_spent() -> None:
    now = [0.0]
    backoff = Backoff(
        initial=1,
        factor=1,
        max_attempts=None,
        max_elapsed=2.5,
        clock=lambda: now[0],
        random=lambda: 1.0,
    )
    waits = []
    for wait in backoff.delays():
        waits.append(wait)
        now[0] += wait
    assert waits == [1, 1, 0.5]


def test_no_attempt_is_left_when_the_time_is_already_spent() -> None:
    now = iter([0.0, 10.0])
    backoff = Backoff(max_elapsed=5, clock=lambda: next(now))
    assert list(backoff.delays()) == []


@pytest.mark.parametrize("attempt", [0, 10, 10_000])
def test_a_delay_never_exceeds_the_cap(attempt: int) -> None:
    assert Backoff(max_delay=3, random=lambda: 1.0).delay(attempt) <= 3

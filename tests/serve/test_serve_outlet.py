"""The outlet of one stream, sans-IO: queueing, resume after a seq, byte accounting."""

from __future__ import annotations

import pytest

from acp2.serve.outlet import Outlet
from acp2.transport.durable import CursorTooOld, Retention


class Held:
    """The connection's byte counter."""

    def __init__(self) -> None:
        self.total = 0

    def __call__(self, delta: int) -> None:
        self.total += delta


def test_a_plain_outlet_hands_its_queue_to_the_reader_and_stops_counting_it() -> None:
    held = Held()
    outlet = Outlet(held)
    outlet.push(b"one")
    outlet.push(b"three")
    assert held.total == 8
    assert outlet.take() == [(0, b"one"), (0, b"three")]
    assert held.total == 0
    assert outlet.take() == []


def test_a_durable_outlet_numbers_messages_and_resends_after_the_readers_last_seq() -> None:
    outlet = Outlet(Held(), retention=Retention(messages=10))
    for text in (b"a", b"b", b"c"):
        outlet.push(text)
    assert outlet.take() == [(1, b"a"), (2, b"b"), (3, b"c")]  # written, then the socket died
    outlet.resume(1)
    assert outlet.take() == [(2, b"b"), (3, b"c")]


def test_a_resume_past_the_window_is_cursor_too_old() -> None:
    outlet = Outlet(Held(), retention=Retention(messages=2))
    for text in (b"a", b"b", b"c", b"d"):
        outlet.push(text)
    with pytest.raises(CursorTooOld):
        outlet.resume(1)
    outlet.resume(2)
    assert outlet.take() == [(3, b"c"), (4, b"d")]


def test_a_resume_claiming_unsent_messages_is_refused() -> None:
    outlet = Outlet(Held(), retention=Retention())
    outlet.push(b"a")
    with pytest.raises(ValueError, match="outside"):
        outlet.resume(5)
    with pytest.raises(ValueError, match="not a durable"):
        Outlet(Held()).resume(0)


def test_on_an_acknowledging_stream_bytes_count_until_acked_not_until_written() -> None:
    held = Held()
    outlet = Outlet(held, retention=Retention(), peer_acks=True)
    outlet.push(b"1234")
    outlet.push(b"56")
    outlet.take()
    assert held.total == 6
    outlet.ack(1)
    assert held.total == 2
    outlet.ack(2)
    assert held.total == 0


def test_an_unacknowledged_durable_window_is_cut_to_its_byte_bound() -> None:
    outlet = Outlet(Held(), retention=Retention(), max_bytes=10)
    for _ in range(5):
        outlet.push(b"abcd")
    outlet.take()
    with pytest.raises(CursorTooOld):
        outlet.resume(0)  # the oldest messages were dropped to stay under 10 bytes
    outlet.resume(3)
    assert [seq for seq, _ in outlet.take()] == [4, 5]


def test_release_gives_back_every_counted_byte() -> None:
    held = Held()
    outlet = Outlet(held, retention=Retention(), peer_acks=True)
    outlet.push(b"abc")
    plain = Outlet(held)
    plain.push(b"de")
    outlet.release()
    plain.release()
    assert held.total == 0


def test_a_newer_reader_makes_the_older_generation_stale() -> None:
    outlet = Outlet(Held())
    first = outlet.attach()
    second = outlet.attach()
    assert outlet.generation == second != first
    outlet.detach(first)
    assert outlet.reading
    outlet.detach(second)
    assert not outlet.reading


def test_pushing_many_at_once_queues_numbers_and_counts_them_as_single_pushes_do() -> None:
    one, many = Held(), Held()
    single = Outlet(one, retention=Retention(), peer_acks=True)
    bulk = Outlet(many, retention=Retention(), peer_acks=True)
    for message in (b"a", b"bb", b"ccc"):
        single.push(message)
    assert bulk.push_all([b"a", b"bb", b"ccc"]) == 3
    assert bulk.take() == single.take() == [(1, b"a"), (2, b"bb"), (3, b"ccc")]
    assert many.total == one.total == 6
    bulk.ack(2)
    assert many.total == 3
    plain = Outlet(Held())
    assert plain.push_all([b"x", b"y"]) == 0
    assert plain.take() == [(0, b"x"), (0, b"y")]


def test_a_bulk_push_past_the_byte_bound_of_an_unacknowledged_window_cuts_it() -> None:
    outlet = Outlet(Held(), retention=Retention(), max_bytes=10)
    outlet.push_all([b"abcd"] * 5)
    outlet.take()
    with pytest.raises(CursorTooOld):
        outlet.resume(2)
    outlet.resume(3)
    assert [seq for seq, _ in outlet.take()] == [4, 5]

"""The sans-IO durable stream pieces (acp2.transport.durable): seqs, windows, envelopes."""

from __future__ import annotations

import msgspec
import pytest

from acp2.transport.durable import (
    ACK_EVERY,
    BATCH_MAX,
    CursorTooOld,
    FrameError,
    Received,
    Retained,
    Retention,
    SeqGap,
    batches,
    decode_frame,
    encode_ack,
    encode_batch,
    encode_data,
    header_seq,
)


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_messages_are_numbered_from_one_and_resent_after_the_last_seq_received() -> None:
    window = Retained()
    seqs = [window.add(b"m%d" % i) for i in range(1, 6)]
    assert seqs == [1, 2, 3, 4, 5]
    assert window.after(3) == [(4, b"m4"), (5, b"m5")]
    assert window.after(5) == []


def test_a_resend_request_acknowledges_what_came_before_it() -> None:
    window = Retained()
    for i in range(10):
        window.add(b"%d" % i)
    window.after(7)
    assert window.pending() == 3
    assert window.acked == 7


def test_acknowledged_messages_are_forgotten_and_cannot_be_resent() -> None:
    window = Retained()
    for i in range(4):
        window.add(b"%d" % i)
    window.ack(3)
    assert window.pending() == 1
    assert window.after(3) == [(4, b"3")]
    with pytest.raises(CursorTooOld):
        window.after(1)


def test_the_count_bound_drops_the_oldest_and_a_resume_from_before_it_is_too_old() -> None:
    window = Retained(Retention(messages=3))
    for i in range(1, 7):
        window.add(b"%d" % i)
    assert window.after(3) == [(4, b"4"), (5, b"5"), (6, b"6")]
    window2 = Retained(Retention(messages=3))
    for i in range(1, 7):
        window2.add(b"%d" % i)
    with pytest.raises(CursorTooOld):
        window2.after(2)


def test_the_age_bound_expires_unacknowledged_messages() -> None:
    clock = Clock()
    window = Retained(Retention(seconds=10), clock=clock)
    window.add(b"old")
    clock.now = 11
    window.add(b"new")
    with pytest.raises(CursorTooOld):
        window.after(0)
    assert window.after(1) == [(2, b"new")]


def test_a_claimed_seq_beyond_what_was_sent_is_refused() -> None:
    window = Retained()
    window.add(b"x")
    with pytest.raises(ValueError, match="outside"):
        window.after(2)
    with pytest.raises(ValueError, match="outside"):
        window.after(-1)


def test_the_receiver_takes_the_next_seq_drops_duplicates_and_refuses_a_gap() -> None:
    inbox = Received()
    assert inbox.accept(1)
    assert inbox.accept(2)
    assert not inbox.accept(2)
    assert not inbox.accept(1)
    with pytest.raises(SeqGap):
        inbox.accept(4)
    assert inbox.last == 2


def test_the_receiver_asks_for_an_ack_every_so_many_messages() -> None:
    inbox = Received()
    for seq in range(1, ACK_EVERY):
        inbox.accept(seq)
    assert not inbox.ack_due()
    inbox.accept(ACK_EVERY)
    assert inbox.ack_due()
    assert inbox.acked() == ACK_EVERY
    assert not inbox.ack_due()


def test_a_data_frame_round_trips_with_the_message_bytes_untouched() -> None:
    message = b'{"jsonrpc":"2.0","method":"session/update","params":{"x":[1,2]}}'
    frame = decode_frame(encode_data(7, message + b"\n"))
    assert frame.seq == 7
    assert bytes(frame.msg) == message
    assert decode_frame(encode_ack(5)).ack == 5


@pytest.mark.parametrize(
    "raw",
    [
        b"not json",
        b"[]",
        b'{"seq":0,"msg":{}}',
        b'{"seq":1}',
        b'{"msg":{}}',
        b'{"ack":-1}',
        b'{"ack":1,"seq":2,"msg":{}}',
        b'{"seq":"1","msg":{}}',
        b'{"seq":1,"msgs":[]}',
        b'{"seq":1,"msgs":{}}',
        b'{"seq":0,"msgs":[{}]}',
        b'{"msgs":[{}]}',
        b'{"seq":1,"msg":{},"msgs":[{}]}',
        b'{"ack":1,"msgs":[{}]}',
        b'{"seq":1,"msgs":[' + b",".join([b"{}"] * (BATCH_MAX + 1)) + b"]}",
    ],
)
def test_anything_but_the_frame_shapes_is_a_frame_error(raw: bytes) -> None:
    with pytest.raises(FrameError):
        decode_frame(raw)


def test_retention_renders_and_parses_its_header() -> None:
    retention = Retention(messages=500, seconds=60)
    assert Retention.parse(retention.header()) == retention
    assert Retention.parse("garbage") == Retention()
    assert Retention.parse("messages=x; seconds=5").seconds == 5


def test_frames_decode_from_text_too() -> None:
    assert isinstance(decode_frame('{"ack":0}').ack, int)
    assert msgspec.json.decode(encode_data(1, b"{}")) == {"seq": 1, "msg": {}}


def test_a_batch_frame_carries_consecutive_seqs_from_its_first_with_the_bytes_untouched() -> None:
    messages = [b'{"a":1}', b'{"b":[1,2]}\n', b'"text"']
    frame = decode_frame(encode_batch(7, messages))
    assert frame.seq == 7
    assert frame.messages() == [b'{"a":1}', b'{"b":[1,2]}', b'"text"']
    assert msgspec.json.decode(encode_batch(1, [b"{}"])) == {"seq": 1, "msgs": [{}]}
    assert decode_frame(encode_data(3, b"{}")).messages() == [b"{}"]


def test_batches_cut_runs_by_count_and_bytes_and_a_lone_message_stays_a_data_frame() -> None:
    items = [(seq, b'{"n":%d}' % seq) for seq in range(1, 11)]
    frames = [decode_frame(f) for f in batches(items, max_count=4)]
    assert [(f.seq, len(f.messages())) for f in frames] == [(1, 4), (5, 4), (9, 2)]
    by_bytes = [decode_frame(f) for f in batches(items, max_bytes=len(items[0][1]) * 3)]
    assert [f.seq for f in by_bytes] == [1, 4, 7, 10]
    assert by_bytes[-1].msgs is None  # one message: the plain data frame
    big = [(1, b"[" + b"0," * 100 + b"0]"), (2, b"{}")]
    assert [decode_frame(f).seq for f in batches(big, max_bytes=10)] == [1, 2]


def test_batches_never_join_seqs_that_are_not_consecutive() -> None:
    frames = batches([(1, b"{}"), (2, b"{}"), (5, b"{}")])
    assert [(decode_frame(f).seq, len(decode_frame(f).messages())) for f in frames] == [
        (1, 2),
        (5, 1),
    ]


def test_the_receiver_takes_a_batch_that_straddles_its_last_seq_once() -> None:
    inbox = Received(ack_every=10)
    assert inbox.accept_batch(1, 4) == 0
    assert inbox.accept_batch(3, 4) == 2  # 3 and 4 again, 5 and 6 new
    assert inbox.last == 6
    assert inbox.accept_batch(2, 3) == 3  # all duplicates
    with pytest.raises(SeqGap):
        inbox.accept_batch(8, 2)
    assert inbox.last == 6
    assert not inbox.ack_due()
    inbox.accept_batch(7, 4)
    assert inbox.ack_due()
    assert inbox.acked() == 10


def test_extend_numbers_many_messages_as_adds_would_and_returns_the_first_seq() -> None:
    one, many = Retained(), Retained()
    one.add(b"a")
    many.add(b"a")
    for message in (b"bb", b"ccc"):
        one.add(message)
    assert many.extend([b"bb", b"ccc"]) == 2
    assert many.extend([]) == 4
    assert many.after(0) == one.after(0) == [(1, b"a"), (2, b"bb"), (3, b"ccc")]
    assert many.last == 3


def test_the_window_knows_its_kept_bytes_through_acks_count_and_age_trims() -> None:
    clock = Clock()
    window = Retained(Retention(messages=4, seconds=10), clock=clock)
    window.extend([b"a", b"bb", b"ccc"])
    assert window.held_bytes == 6
    window.ack(2)
    assert window.held_bytes == 3
    clock.now = 5
    window.extend([b"dddd", b"eeeee", b"f", b"gg"])  # 4 kept at most: "ccc" goes
    assert window.held_bytes == 12
    clock.now = 14
    window.add(b"h")  # "dddd" goes by count; nothing is 10 s old yet
    assert window.held_bytes == 9
    clock.now = 15.5
    window.add(b"i")  # everything sent at 5 expires
    assert window.after(7) == [(8, b"h"), (9, b"i")]
    assert window.held_bytes == 2


def test_shed_forgets_the_oldest_until_the_kept_bytes_fit() -> None:
    window = Retained()
    window.extend([b"aaaa", b"bbbb", b"cccc", b"dd"])
    window.shed(7)
    assert window.held_bytes == 6
    assert window.acked == 2
    window.shed(100)
    assert window.held_bytes == 6
    with pytest.raises(CursorTooOld):
        window.after(1)


def test_batches_of_a_consecutive_queue_match_the_general_cut_and_leave_no_message_out() -> None:
    items = [(seq, b'{"n":%d}' % seq + b" " * (seq % 7) * 40) for seq in range(10, 400)]
    frames = batches(items, max_count=16, max_bytes=900)
    seen = [m for frame in frames for m in decode_frame(frame).messages()]
    assert seen == [m.strip() for _, m in items]
    assert all(len(decode_frame(f).messages()) <= 16 for f in frames)
    gapped = [*items[:5], *items[6:]]  # not consecutive: the general path, same rule
    assert [decode_frame(f).seq for f in batches(gapped, 16, 900)][:2] == [10, 16]


@pytest.mark.parametrize("value", ["12", "0"])
def test_a_header_seq_of_ascii_digits_is_read(value: str) -> None:
    assert header_seq(value) == int(value)


@pytest.mark.parametrize("value", [None, "", "-1", "+1", " 1", "1.0", "\u00b2", "\u0665", "x1"])
def test_a_header_seq_of_anything_else_is_none(value: str | None) -> None:
    assert header_seq(value) is None

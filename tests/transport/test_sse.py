"""The SSE parser: events from body chunks split anywhere, ids kept, comments skipped,
every line ending of the grammar, and a bound on event size; the usual event shape read by
prefix gives what the general line grammar gives."""

from __future__ import annotations

import random

import pytest

from acp2.transport.sse import SseError, SseEvent, SseParser


def feed_all(chunks: list[bytes]) -> list[SseEvent]:
    parser = SseParser()
    return [event for chunk in chunks for event in parser.feed(chunk)]


def test_an_event_is_dispatched_at_the_blank_line_with_its_id() -> None:
    assert feed_all([b'id: 7\ndata: {"a":1}\n\n']) == [SseEvent(b'{"a":1}', "7")]


def test_events_split_at_every_byte_come_out_whole() -> None:
    body = b'id: 1\r\ndata: {"x":"y"}\r\n\r\n: keepalive\r\n\r\nid: 2\rdata: z\r\r\n'
    expected = [SseEvent(b'{"x":"y"}', "1"), SseEvent(b"z", "2")]
    assert feed_all([body[i : i + 1] for i in range(len(body))]) == expected
    assert feed_all([body]) == expected


def test_comments_and_unknown_fields_are_ignored() -> None:
    assert feed_all([b": keepalive\n\nevent: message\nretry: 5\ndata: m\n\n"]) == [
        SseEvent(b"m", None)
    ]


def test_data_lines_of_one_event_are_joined_by_newlines() -> None:
    assert feed_all([b"data: a\ndata:b\n\n"]) == [SseEvent(b"a\nb", None)]


def test_the_last_id_carries_over_to_later_events() -> None:
    assert [e.id for e in feed_all([b"id: 3\ndata: a\n\ndata: b\n\n"])] == ["3", "3"]


def test_an_event_over_the_bound_is_refused() -> None:
    parser = SseParser(max_bytes=10)
    with pytest.raises(SseError):
        parser.feed(b"data: " + b"x" * 20 + b"\n")
    with pytest.raises(SseError):
        SseParser(max_bytes=10).feed(b"data: " + b"x" * 20)


def test_messages_give_the_data_and_the_last_id_of_a_chunk() -> None:
    parser = SseParser()
    assert parser.last_id is None
    assert parser.messages(b"id: 1\ndata: a\n\nid: 2\ndata: b\n\nid: 3\nda") == [b"a", b"b"]
    assert parser.last_id == b"2"  # the unfinished event's id is not the cursor yet
    assert parser.messages(b"ta: c\n\n: keepalive\n\n") == [b"c"]
    assert parser.last_id == b"3"


def test_unusual_events_follow_the_line_grammar() -> None:
    body = (
        b"id: 1\ndata: a\ndata: b\n\n"  # two data lines
        b"id: \x002\ndata: c\n\n"  # an id with NUL is ignored
        b"id:4\ndata:d\n\n"  # no space after the colons
        b"\n\n\ndata: e\nevent: x\n\n"  # blank lines first, a field after the data
        b"id: 5\n\n"  # an id without data dispatches nothing
        b"data\n\n"  # a field without a colon: empty data
        b"data: f\n\n"  # the id carries over
    )
    expected = [
        SseEvent(b"a\nb", "1"),
        SseEvent(b"c", "1"),
        SseEvent(b"d", "4"),
        SseEvent(b"e", "4"),
        SseEvent(b"", "5"),
        SseEvent(b"f", "5"),
    ]
    assert feed_all([body]) == expected
    assert feed_all([body[i : i + 1] for i in range(len(body))]) == expected


def test_random_cuts_give_the_same_events_as_one_chunk() -> None:
    pieces = [b"id: 12\n", b"data: {}\n", b"data:x\n", b"\n", b"\r\n", b"\r", b": k\n", b"id:\n"]
    rng = random.Random(15)
    for _ in range(500):
        body = b"".join(rng.choice(pieces) for _ in range(rng.randint(0, 30)))
        cuts = sorted(rng.sample(range(len(body) + 1), min(len(body) + 1, 4)))
        chunks = [body[a:b] for a, b in zip([0, *cuts], [*cuts, len(body)], strict=True)]
        assert feed_all(chunks) == feed_all([body])


def test_a_long_comment_line_is_skipped_and_an_event_over_the_bound_refused() -> None:
    parser = SseParser(max_bytes=16)
    assert parser.messages(b": a comment longer than the bound\nid: 9\ndata: ok") == []
    assert parser.messages(b"\n\ndata: next\n\n") == [b"ok", b"next"]
    assert parser.last_id == b"9"
    with pytest.raises(SseError):
        parser.messages(b"data: 0123456789\ndata: 0123456789\n")

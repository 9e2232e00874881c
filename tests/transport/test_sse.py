"""The SSE parser: events from body chunks split anywhere, ids kept, comments skipped,
every line ending of the grammar, and a bound on event size."""

from __future__ import annotations

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

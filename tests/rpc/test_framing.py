"""LineFramer: newline framing, CR/blank tolerance, size limit (TR-02, TR-13)."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from acp2.rpc.framing import LineFramer, Oversized


def feed_all(framer: LineFramer, chunks: list[bytes]) -> list[bytes | Oversized]:
    out: list[bytes | Oversized] = []
    for chunk in chunks:
        out.extend(framer.feed(chunk))
    out.extend(framer.close())
    return out


def chunked(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


@pytest.mark.parametrize("size", [1, 2, 3, 7, 64, 10_000])
def test_tr02_lines_are_split_on_newline_whatever_the_chunking(size: int) -> None:
    data = b'{"a":1}\n{"b":"x y"}\n[1,2]\n'
    assert feed_all(LineFramer(), chunked(data, size)) == [b'{"a":1}', b'{"b":"x y"}', b"[1,2]"]


def test_tr02_only_newline_splits_not_u2028_or_cr() -> None:
    line = '{"t":"a\u2028b\rc\u0085d"}'.encode()
    assert LineFramer().feed(line + b"\n") == [line]


def test_tr02_trailing_cr_is_stripped_and_blank_lines_are_skipped() -> None:
    data = b'\n\r\n  \n{"a":1}\r\n\t\r\n{"b":2}\n\n'
    assert feed_all(LineFramer(), [data]) == [b'{"a":1}', b'{"b":2}']


def test_close_returns_the_final_unterminated_line() -> None:
    framer = LineFramer()
    assert framer.feed(b'{"a":1}\n{"b"') == [b'{"a":1}']
    assert framer.feed(b":2}") == []
    assert framer.close() == [b'{"b":2}']
    assert framer.close() == []


@pytest.mark.parametrize("size", [1, 5, 100, 4096, 1_000_000])
def test_oversized_line_is_dropped_alone_and_framing_resumes(size: int) -> None:
    big = b'{"jsonrpc":"2.0","id":7,"params":"' + b"x" * 5000 + b'"}'
    data = b'{"a":1}\n' + big + b'\r\n{"b":2}\n'
    events = feed_all(LineFramer(max_message_size=1000), chunked(data, size))
    assert events[0] == b'{"a":1}'
    assert isinstance(events[1], Oversized)
    assert events[1].size == len(big)
    assert events[1].head == big[:4096]
    assert big.endswith(events[1].tail)
    assert len(events[1].tail) >= 500
    assert events[2:] == [b'{"b":2}']


def test_a_line_of_exactly_the_limit_is_accepted() -> None:
    line = b"[" + b"1" * 98 + b"]"
    assert LineFramer(max_message_size=100).feed(line + b"\n") == [line]
    assert isinstance(LineFramer(max_message_size=99).feed(line + b"\n")[0], Oversized)


def test_oversized_line_is_never_buffered_whole() -> None:
    framer = LineFramer(max_message_size=1000)
    for _ in range(1000):
        assert framer.feed(b"y" * 997) == []
        assert framer.buffered <= 1000
    (event,) = framer.feed(b"\n")
    assert isinstance(event, Oversized)
    assert event.size == 997_000


def test_oversized_final_line_is_reported_at_close() -> None:
    framer = LineFramer(max_message_size=10)
    assert framer.feed(b"z" * 50) == []
    (event,) = framer.close()
    assert isinstance(event, Oversized)
    assert event.size == 50


def test_max_message_size_must_be_positive() -> None:
    with pytest.raises(ValueError, match="positive"):
        LineFramer(max_message_size=0)


lines_strategy = st.lists(st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"")), max_size=20)


@given(lines=lines_strategy, cuts=st.lists(st.integers(min_value=0, max_value=900), max_size=30))
def test_any_chunking_yields_the_same_lines(lines: list[bytes], cuts: list[int]) -> None:
    data = b"\n".join(lines) + b"\n"
    bounds = sorted({0, len(data), *(c for c in cuts if c < len(data))})
    chunks = [data[a:b] for a, b in itertools.pairwise(bounds)]
    expected = []
    for line in lines:
        line = line[:-1] if line.endswith(b"\r") else line
        if line.strip():
            expected.append(line)
    assert feed_all(LineFramer(), chunks) == expected


@given(
    lines=st.lists(st.binary(max_size=60).map(lambda b: b.replace(b"\n", b"")), max_size=12),
    cuts=st.lists(st.integers(min_value=0, max_value=900), max_size=30),
    limit=st.integers(min_value=1, max_value=50),
)
def test_long_lines_gathered_in_place_frame_exactly_like_short_ones(
    lines: list[bytes], cuts: list[int], limit: int
) -> None:
    """A line past the in-place threshold (here a few bytes) gives the same events,
    oversized ones included, as the list-of-chunks path."""
    data = b"\n".join(lines) + b"\n"
    bounds = sorted({0, len(data), *(c for c in cuts if c < len(data))})
    chunks = [data[a:b] for a, b in itertools.pairwise(bounds)]
    plain = feed_all(LineFramer(max_message_size=limit, big_line=10**9), chunks)
    gathered = feed_all(LineFramer(max_message_size=limit, big_line=3), chunks)
    assert [repr(e) if isinstance(e, Oversized) else e for e in gathered] == [
        repr(e) if isinstance(e, Oversized) else e for e in plain
    ]
    assert [(e.size, e.head, e.tail) for e in gathered if isinstance(e, Oversized)] == [
        (e.size, e.head, e.tail) for e in plain if isinstance(e, Oversized)
    ]


def test_a_line_past_the_threshold_is_held_in_one_buffer_not_chunks() -> None:
    framer = LineFramer(big_line=10)
    assert framer.feed(b'{"a":"') == []
    assert framer.feed(b"x" * 20) == []
    assert framer._parts == []
    assert framer.buffered == 26
    assert framer.feed(b'"}\n{"b":1}\n') == [b'{"a":"' + b"x" * 20 + b'"}', b'{"b":1}']
    assert framer.buffered == 0


def test_an_oversized_line_held_in_short_pieces_keeps_every_byte_of_its_tail() -> None:
    # Found by the property test above: the tail was taken from the last held piece only.
    framer = LineFramer(max_message_size=4)
    events = [e for chunk in (b"a", b"bcd", b"e", b"\n") for e in framer.feed(chunk)]
    assert [(e.size, e.head, e.tail) for e in events if isinstance(e, Oversized)] == [
        (5, b"abcde", b"abcde")
    ]

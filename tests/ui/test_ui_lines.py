"""Reading input lines off the event loop (acp2.ui.lines)."""

from __future__ import annotations

import io
import os
from collections.abc import Iterator
from typing import TextIO

import anyio
import pytest

from acp2.ui.lines import LineReader
from helpers.timeouts import TIMEOUT

pytestmark = pytest.mark.anyio


async def test_lines_come_in_order_then_empty_at_the_end() -> None:
    reader = LineReader(io.StringIO("one\ntwo\n"))
    with anyio.fail_after(TIMEOUT):
        assert [await reader.readline() for _ in range(4)] == ["one\n", "two\n", "", ""]
    assert reader.eof


@pytest.fixture
def pipe() -> Iterator[tuple[TextIO, TextIO]]:
    """A pipe as (read stream, write stream)."""
    read_end, write_end = os.pipe()
    with open(read_end, encoding="utf-8") as stream, open(write_end, "w") as writer:
        yield stream, writer


async def test_a_line_read_for_a_cancelled_caller_is_kept_for_the_next(
    pipe: tuple[TextIO, TextIO],
) -> None:
    stream, writer = pipe
    reader = LineReader(stream)
    with anyio.move_on_after(0.05):
        await reader.readline()  # nothing typed yet: given up
    writer.write("kept\n")
    writer.flush()
    with anyio.fail_after(TIMEOUT):
        assert await reader.readline() == "kept\n"

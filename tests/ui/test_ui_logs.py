"""acp2's warnings on the terminal (acp2.ui.logs): sanitized, installed once."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator

import pytest

from acp2.ui.logs import safe_stderr_logging


@pytest.fixture
def stream() -> Iterator[io.StringIO]:
    out = io.StringIO()
    handler = safe_stderr_logging(out)
    yield out
    logging.getLogger("acp2").removeHandler(handler)


def test_a_warning_quoting_the_agent_is_sanitized(stream: io.StringIO) -> None:
    logging.getLogger("acp2.client").warning("unknown session %s", "s\x1b]0;pwned\x07")
    assert stream.getvalue() == "acp2: unknown session s\n"


def test_the_handler_is_installed_once(stream: io.StringIO) -> None:
    safe_stderr_logging(io.StringIO())
    logging.getLogger("acp2.client").warning("once")
    assert stream.getvalue() == "acp2: once\n"


def test_info_lines_are_not_shown(stream: io.StringIO) -> None:
    logging.getLogger("acp2.client").info("chatty")
    assert stream.getvalue() == ""

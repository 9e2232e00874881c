"""Log lines on the terminal, sanitized: acp2's warnings quote what a peer sent (a session
id, a decode error), and Python prints warnings on stderr even when logging was never
configured. :func:`safe_stderr_logging` gives the ``acp2`` logger a stderr handler whose
formatter passes every line through :func:`acp2.sanitize.prose`."""

from __future__ import annotations

import logging
import sys
from typing import TextIO

from acp2 import sanitize

__all__ = ["SAFE_HANDLER", "SafeFormatter", "safe_stderr_logging"]

#: The attribute (True) of a root handler that already writes sanitized single lines to
#: stderr (set by ``acp2.cli.main``): with one, no second handler is added.
SAFE_HANDLER = "acp2_safe_stderr"


class SafeFormatter(logging.Formatter):
    """A formatter whose output (message and traceback) is sanitized for a terminal."""

    def format(self, record: logging.LogRecord) -> str:
        """The formatted record, sanitized (``\\n`` kept)."""
        return sanitize.prose(super().format(record))


def safe_stderr_logging(stream: TextIO | None = None) -> logging.Handler:
    """Send ``acp2`` warnings and errors to ``stream`` (default: stderr at the time of
    logging) through :class:`SafeFormatter`, once; return the handler."""
    logger = logging.getLogger("acp2")
    for handler in logger.handlers:
        if isinstance(handler.formatter, SafeFormatter):
            return handler
    for handler in logging.getLogger().handlers:
        # The acp2 command line's own one-line handler (acp2.cli.main) already writes the
        # acp2 records, sanitized: a second handler printed every warning twice.
        if getattr(handler, SAFE_HANDLER, False) and handler.level <= logging.WARNING:
            return handler
    handler = _StderrHandler(stream)
    handler.setLevel(logging.WARNING)
    handler.setFormatter(SafeFormatter("acp2: %(message)s"))
    logger.addHandler(handler)
    return handler


class _StderrHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to ``sys.stderr`` as it is when a record arrives (tests replace it)."""

    def __init__(self, stream: TextIO | None) -> None:
        super().__init__(stream)
        self._fixed = stream

    def emit(self, record: logging.LogRecord) -> None:
        """Write ``record`` to the fixed stream, else to the current stderr."""
        self.stream = self._fixed or sys.stderr
        super().emit(record)

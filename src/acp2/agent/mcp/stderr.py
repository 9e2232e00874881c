"""A stdio MCP server's stderr: always drained (a full pipe would stall the server), only
its last bytes kept, for the message that says why the server failed."""

from __future__ import annotations

import contextlib
import os
import threading
from typing import TextIO, cast

from acp2 import sanitize

__all__ = ["StderrTail"]

_READ = 65536


class StderrTail:
    """A pipe whose write end a server gets as stderr; a daemon thread reads it to EOF,
    keeping at most ``limit`` bytes. Memory stays bounded whatever the server writes."""

    def __init__(self, limit: int) -> None:
        self._limit = max(0, limit)
        self._tail = b""
        #: Set once the pipe reached end-of-file (every holder of the write end is gone).
        self.finished = threading.Event()
        read_fd, write_fd = os.pipe()
        self._read_fd = read_fd
        #: The write end, to pass as the process's stderr; :meth:`spawned` closes our copy.
        self.writer = cast(TextIO, os.fdopen(write_fd, "w"))
        self._thread = threading.Thread(target=self._drain, name="mcp-stderr", daemon=True)
        self._thread.start()

    def spawned(self) -> None:
        """The child has its copy of the write end: close ours, so EOF comes at its exit."""
        with contextlib.suppress(OSError):
            self.writer.close()

    def text(self) -> str:
        """The last bytes the server wrote, decoded and sanitized, on one line."""
        text = self._tail.decode("utf-8", "replace").strip()
        return sanitize.line(" ".join(text.split()))[-500:]

    def _drain(self) -> None:
        try:
            while chunk := os.read(self._read_fd, _READ):
                self._tail = (self._tail + chunk)[-self._limit :] if self._limit else b""
        except OSError:
            pass
        finally:
            with contextlib.suppress(OSError):
                os.close(self._read_fd)
            self.finished.set()

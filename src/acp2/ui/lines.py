"""Reading lines from a stream without blocking the event loop (the non-TTY input).

Each read runs in a daemon thread, so a read abandoned at exit (the agent failed while we
waited for the next prompt) never keeps the process alive. A line that arrives after its
reader was cancelled (a permission question the agent withdrew) is kept for the next
:meth:`LineReader.readline`, never dropped.
"""

from __future__ import annotations

import contextlib
import threading
from collections import deque
from typing import TextIO

import anyio
import anyio.from_thread
import anyio.lowlevel

__all__ = ["LineReader"]


class LineReader:
    """Reads ``stream`` line by line; :meth:`readline` returns ``""`` at end of input.

    Lines are handed out in order, one per call: prompts and permission answers come from
    the same stream, in the order the chat asks for them.
    """

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.eof = False
        self._lines: deque[str] = deque()
        self._reading = False
        self._arrived = anyio.Event()

    async def readline(self) -> str:
        """The next line with its newline, or ``""`` once the input ended (or failed)."""
        while not self._lines:
            if self.eof:
                return ""
            if not self._reading:
                self._start_read()
            await self._arrived.wait()
        line = self._lines.popleft()
        if not line:
            self.eof = True
        return line

    def _start_read(self) -> None:
        self._reading = True
        token = anyio.lowlevel.current_token()

        def read() -> None:
            try:
                line = self.stream.readline()
            except (OSError, ValueError):
                line = ""
            # RuntimeError: the event loop is gone, so nobody waits for this line any more.
            with contextlib.suppress(RuntimeError):
                anyio.from_thread.run_sync(self._deliver, line, token=token)

        threading.Thread(target=read, name="acp2 chat input", daemon=True).start()

    def _deliver(self, line: str) -> None:
        self._lines.append(line)
        self._reading = False
        arrived, self._arrived = self._arrived, anyio.Event()
        arrived.set()

"""Server-sent events, sans-IO: bytes of a ``text/event-stream`` body in, events out.

Only what ACP streams use: ``data:`` lines (joined with newlines), ``id:`` (the durable
cursor), comments (keepalives) skipped, other fields ignored; lines end in CRLF, LF or CR
(the SSE grammar), also when a chunk boundary splits a CRLF.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["SseError", "SseEvent", "SseParser"]


class SseError(ValueError):
    """An event larger than the parser's bound."""


@dataclass(frozen=True, slots=True)
class SseEvent:
    """One dispatched event: its ``data`` and the ``id`` it carried (``None``: none)."""

    data: bytes
    id: str | None


class SseParser:
    """Feed body chunks with :meth:`feed`; get the complete events back.

    ``max_bytes`` bounds one event's data (and a line): a peer that sends more raises
    :class:`SseError` instead of growing memory.
    """

    __slots__ = ("_buffer", "_data", "_id", "_max", "_size")

    def __init__(self, max_bytes: int = 64 * 1024 * 1024) -> None:
        self._max = max_bytes
        self._buffer = b""
        self._data: list[bytes] = []
        self._size = 0
        self._id: str | None = None

    def feed(self, chunk: bytes) -> list[SseEvent]:
        """The events that ``chunk`` completes, in order."""
        buffer = self._buffer + chunk
        # A CR at the very end may be the first half of a CRLF: keep it for the next chunk.
        keep_cr = buffer.endswith(b"\r")
        if keep_cr:
            buffer = buffer[:-1]
        lines = buffer.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n")
        rest = lines.pop()
        self._buffer = rest + (b"\r" if keep_cr else b"")
        if len(self._buffer) > self._max:
            raise SseError(f"an SSE line longer than {self._max} bytes")
        events: list[SseEvent] = []
        for line in lines:
            event = self._line(line)
            if event is not None:
                events.append(event)
        return events

    def _line(self, line: bytes) -> SseEvent | None:
        if not line:
            return self._dispatch()
        if line.startswith(b":"):
            return None
        name, _, value = line.partition(b":")
        if value.startswith(b" "):
            value = value[1:]
        if name == b"data":
            self._size += len(value) + 1
            if self._size > self._max:
                raise SseError(f"an SSE event larger than {self._max} bytes")
            self._data.append(value)
        elif name == b"id" and b"\0" not in value:
            self._id = value.decode("utf-8", "replace")
        return None

    def _dispatch(self) -> SseEvent | None:
        if not self._data:
            return None
        event = SseEvent(b"\n".join(self._data), self._id)
        self._data = []
        self._size = 0
        return event

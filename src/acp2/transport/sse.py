"""Server-sent events, sans-IO: bytes of a ``text/event-stream`` body in, events out.

Only what ACP streams use: ``data:`` lines (joined with newlines), ``id:`` (the durable
cursor), comments (keepalives) skipped, other fields ignored; lines end in CRLF, LF or CR
(the SSE grammar), also when a chunk boundary splits a CRLF.

The parser scans for whole events (a blank line ends one) and reads the usual shape of an
event -- ``id: N`` and one ``data: ...`` line, or the data line alone -- by prefix, without
cutting it into lines; anything else goes through the general line grammar. A stream is
many small events, so this per-event work is most of what a client spends on SSE framing.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["SseError", "SseEvent", "SseParser"]

_DATA = b"data: "
_ID = b"id: "


class SseError(ValueError):
    """An event larger than the parser's bound."""


@dataclass(frozen=True, slots=True)
class SseEvent:
    """One dispatched event: its ``data`` and the ``id`` it carried (``None``: none)."""

    data: bytes
    id: str | None


class SseParser:
    """Feed body chunks with :meth:`feed` (events) or :meth:`messages` (their data only).

    ``max_bytes`` bounds one event's data (and a line): a peer that sends more raises
    :class:`SseError` instead of growing memory. :attr:`last_id` is the last event ID
    (the ``id`` of the last event dispatched, carried over from earlier events as the SSE
    grammar says) as bytes, ``None`` before any.
    """

    __slots__ = ("_buffer", "_cr", "_data", "_id", "_ids", "_max", "_mid", "_size", "last_id")

    def __init__(self, max_bytes: int = 64 * 1024 * 1024) -> None:
        self._max = max_bytes
        #: The unread bytes; they always start at a line start.
        self._buffer = b""
        #: A CR ended the last chunk: it may be the first half of a CRLF.
        self._cr = False
        #: Whether lines of the current event were already taken into the state below
        #: (only when an unfinished event grew past the bound: then it is read by line).
        self._mid = False
        self._data: list[bytes] = []
        self._size = 0
        self._id: bytes | None = None
        #: Where :meth:`feed` collects each event's id (``None``: :meth:`messages`).
        self._ids: list[bytes | None] | None = None
        self.last_id: bytes | None = None

    def feed(self, chunk: bytes) -> list[SseEvent]:
        """The events that ``chunk`` completes, in order."""
        ids: list[bytes | None] = []
        self._ids = ids
        try:
            datas = self.messages(chunk)
        finally:
            self._ids = None
        return [SseEvent(data, _text(ident)) for data, ident in zip(datas, ids, strict=True)]

    def messages(self, chunk: bytes) -> list[bytes]:
        """The data of each event ``chunk`` completes, in order (:attr:`last_id` is then
        the id of the last of them)."""
        buffer = self._unread(chunk)
        out: list[bytes] = []
        start = 0
        if self._mid:
            start = self._finish_event(buffer, out)
            if start < 0:
                return out
        find = buffer.find
        while (end := find(b"\n\n", start)) >= 0:
            self._event(buffer, start, end, out)
            start = end + 2
        rest = buffer[start:] if start else buffer
        if len(rest) > self._max:
            rest = self._take_lines(rest, out)
        self._buffer = rest
        return out

    # -- reading -----------------------------------------------------------------------

    def _unread(self, chunk: bytes) -> bytes:
        """The buffer with ``chunk`` appended, line endings made LF."""
        if self._cr:
            chunk = b"\r" + chunk
            self._cr = False
        if b"\r" in chunk:
            if chunk.endswith(b"\r"):
                chunk = chunk[:-1]
                self._cr = True
            chunk = chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        return self._buffer + chunk if self._buffer else chunk

    def _event(self, buffer: bytes, start: int, end: int, out: list[bytes]) -> None:
        """The event in ``buffer[start:end]`` (its lines, without the blank line)."""
        at = start
        ident = self._id
        if buffer.startswith(_ID, start):
            nl = buffer.find(b"\n", start, end)
            if nl < 0 or buffer.find(b"\0", start, nl) >= 0:
                self._general(buffer[start:end], out)
                return
            ident = buffer[start + 4 : nl]
            at = nl + 1
        if not buffer.startswith(_DATA, at) or buffer.find(b"\n", at, end) >= 0:
            self._general(buffer[start:end], out)
            return
        if end - at - 5 > self._max:  # as :meth:`_line` counts: the data and a newline
            raise SseError(f"an SSE event larger than {self._max} bytes")
        self._id = self.last_id = ident
        out.append(buffer[at + 6 : end])
        if self._ids is not None:
            self._ids.append(ident)

    def _general(self, block: bytes, out: list[bytes]) -> None:
        for line in block.split(b"\n"):
            self._line(line, out)
        self._dispatch(out)

    def _finish_event(self, buffer: bytes, out: list[bytes]) -> int:
        """Read the event begun in an earlier chunk line by line; return where the next
        event starts, or -1 when this one is not finished (the rest is kept)."""
        start = 0
        while (nl := buffer.find(b"\n", start)) >= 0:
            line = buffer[start:nl]
            start = nl + 1
            if not line:
                self._mid = False
                self._dispatch(out)
                return start
            self._line(line, out)
        self._buffer = self._bounded(buffer[start:])
        return -1

    def _take_lines(self, rest: bytes, out: list[bytes]) -> bytes:
        """An unfinished event past the bound: take its whole lines now (so a long one
        raises), keep only its last, partial line."""
        lines = rest.split(b"\n")
        for line in lines[:-1]:
            self._line(line, out)
        self._mid = True
        return self._bounded(lines[-1])

    def _bounded(self, partial: bytes) -> bytes:
        if len(partial) > self._max:
            raise SseError(f"an SSE line longer than {self._max} bytes")
        return partial

    def _line(self, line: bytes, out: list[bytes]) -> None:
        if not line:
            self._dispatch(out)
            return
        if line.startswith(b":"):
            return
        name, _, value = line.partition(b":")
        if value.startswith(b" "):
            value = value[1:]
        if name == b"data":
            self._size += len(value) + 1
            if self._size > self._max:
                raise SseError(f"an SSE event larger than {self._max} bytes")
            self._data.append(value)
        elif name == b"id" and b"\0" not in value:
            self._id = value

    def _dispatch(self, out: list[bytes]) -> None:
        if not self._data:
            return
        out.append(b"\n".join(self._data))
        self.last_id = self._id
        if self._ids is not None:
            self._ids.append(self._id)
        self._data = []
        self._size = 0


def _text(ident: bytes | None) -> str | None:
    return None if ident is None else ident.decode("utf-8", "replace")

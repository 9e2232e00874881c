"""Server-sent events, sans-IO: bytes of a ``text/event-stream`` body in, events out.

Only what ACP streams use: ``data:`` lines (joined with newlines), ``id:`` (the durable
cursor), comments (keepalives) skipped, other fields ignored; lines end in CRLF, LF or CR
(the SSE grammar), also when a chunk boundary splits a CRLF.

A chunk is cut into lines once; the usual shape of an event -- ``id: N`` and one
``data: ...`` line, or the data line alone, then the blank line -- is read by prefix, three
lines at a time, and anything else goes through the general line grammar. A stream is many
small events, so this per-event work is most of what a client spends on SSE framing.
"""

from __future__ import annotations

from dataclasses import dataclass

from acp2.errors import SseError

__all__ = ["SseError", "SseEvent", "SseParser"]

_DATA = b"data: "
_ID = b"id: "


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

    __slots__ = ("_buffer", "_cr", "_data", "_id", "_ids", "_max", "_size", "last_id")

    def __init__(self, max_bytes: int = 64 * 1024 * 1024) -> None:
        self._max = max_bytes
        #: The partial line at the end of what was fed.
        self._buffer = b""
        #: A CR ended the last chunk: it may be the first half of a CRLF.
        self._cr = False
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
        lines = self._lines(chunk)
        out: list[bytes] = []
        count = len(lines)
        at = 0
        while at < count:
            # The usual shapes, whole in this chunk, read by prefix: ``id: N`` (digits),
            # ``data: ...``, blank; or ``data: ...``, blank. The rest goes by the grammar.
            line = lines[at]
            if not self._data:
                if line[:4] == _ID and at + 2 < count and not lines[at + 2]:
                    data, ident = lines[at + 1], line[4:]
                    if data[:6] == _DATA and ident.isdigit():
                        self._id = ident
                        self._take(data, out)
                        at += 3
                        continue
                elif line[:6] == _DATA and at + 1 < count and not lines[at + 1]:
                    self._take(line, out)
                    at += 2
                    continue
            self._line(line, out)
            at += 1
        return out

    def _lines(self, chunk: bytes) -> list[bytes]:
        """The whole lines that ``chunk`` ends, line endings made LF; the partial last
        line is kept for the next chunk."""
        if self._cr:
            chunk = b"\r" + chunk
            self._cr = False
        if b"\r" in chunk:
            if chunk.endswith(b"\r"):  # maybe the first half of a CRLF
                chunk = chunk[:-1]
                self._cr = True
            chunk = chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        lines = (self._buffer + chunk if self._buffer else chunk).split(b"\n")
        partial = lines.pop()
        if len(partial) > self._max:
            raise SseError(f"an SSE line longer than {self._max} bytes")
        self._buffer = partial
        return lines

    def _take(self, line: bytes, out: list[bytes]) -> None:
        """Dispatch the event whose one data line is ``line`` (``data: ...``)."""
        if len(line) - 5 > self._max:  # as :meth:`_line` counts: the data and a newline
            raise SseError(f"an SSE event larger than {self._max} bytes")
        out.append(line[6:])
        self.last_id = self._id
        if self._ids is not None:
            self._ids.append(self._id)

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

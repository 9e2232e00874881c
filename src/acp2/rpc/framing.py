"""Newline-delimited framing for JSON-RPC over byte streams (sans-IO).

Feed any chunks of bytes to :class:`LineFramer`; it returns the complete lines, each
without its ``\\n`` (and without a trailing ``\\r``). Blank lines are skipped (TR-02).

A line longer than ``max_message_size`` is never buffered whole: the framer keeps its
first and last few bytes (enough to find the request id), discards the rest as it
arrives, and reports an :class:`Oversized` event once the terminating newline is seen.
Framing then resumes with the next line, so one huge message cannot break the stream.

A line longer than :data:`BIG_LINE` is gathered in one ``bytearray`` instead of a list of
chunks: it grows in place, each chunk is freed as soon as it is copied in, and the
buffer goes back to the OS once the line is complete -- a 60 MiB message then costs
twice its size for a moment, not the chunks' memory left behind in the heap.
"""

from __future__ import annotations

from typing import Final

__all__ = ["DEFAULT_MAX_MESSAGE_SIZE", "LineFramer", "Oversized"]

#: The default limit for one message, in bytes (the TS SDK allows 32 MiB).
DEFAULT_MAX_MESSAGE_SIZE: Final = 64 * 1024 * 1024

#: How many leading / trailing bytes of an oversized line are kept for diagnosis.
HEAD_SIZE: Final = 4096
TAIL_SIZE: Final = 512

#: Lines longer than this are gathered in a bytearray (see the module docstring).
BIG_LINE: Final = 1024 * 1024

_WHITESPACE: Final = frozenset(b" \t\r\n\x0b\x0c")  # what bytes.strip() removes


class Oversized:
    """A line that exceeded the size limit and was dropped.

    ``size`` is its full length in bytes; ``head`` / ``tail`` are its first / last bytes.
    """

    __slots__ = ("head", "size", "tail")

    def __init__(self, size: int, head: bytes, tail: bytes) -> None:
        self.size = size
        self.head = head
        self.tail = tail

    def __repr__(self) -> str:
        return f"Oversized(size={self.size}, head={self.head[:40]!r})"


class LineFramer:
    """Split a byte stream into lines; a pure state machine with no I/O.

    ``feed(chunk)`` returns the events completed by that chunk, in order: ``bytes`` for
    a complete line, :class:`Oversized` for a dropped one. ``close()`` flushes the final
    unterminated line, if any. ``big_line`` is the :data:`BIG_LINE` threshold (tests).
    """

    __slots__ = (
        "_big",
        "_big_line",
        "_head",
        "_max",
        "_parts",
        "_parts_len",
        "_skip_size",
        "_skipping",
        "_tail",
    )

    def __init__(
        self, max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE, *, big_line: int = BIG_LINE
    ) -> None:
        if max_message_size < 1:
            raise ValueError("max_message_size must be positive")
        self._max = max_message_size
        self._big_line = big_line
        self._parts: list[bytes] = []
        #: A line past BIG_LINE bytes, gathered in place (then ``_parts`` is empty).
        self._big: bytearray | None = None
        self._parts_len = 0
        self._skipping = False
        self._skip_size = 0
        self._head = b""
        self._tail = b""

    @property
    def max_message_size(self) -> int:
        """The size limit for one line, in bytes (newline excluded)."""
        return self._max

    @property
    def buffered(self) -> int:
        """How many bytes of an incomplete line are held (bounded by the limit)."""
        return self._parts_len

    def feed(self, data: bytes) -> list[bytes | Oversized]:
        """Consume ``data``; return the lines and oversize events it completed."""
        out: list[bytes | Oversized] = []
        start = 0
        if self._skipping:
            start = self._skip(data, out)
            if start < 0:
                return out
        if self._parts_len:
            nl = data.find(b"\n", start)
            if nl < 0:
                self._hold(data[start:] if start else data, out)
                return out
            self._emit(self._complete(data[start:nl]), out)
            start = nl + 1
        self._split(data, start, out)
        return out

    def close(self) -> list[bytes | Oversized]:
        """End of stream: return the final unterminated line (or oversize event), if any."""
        out: list[bytes | Oversized] = []
        if self._skipping:
            out.append(Oversized(self._skip_size, self._head, self._tail))
            self._skipping = False
        elif self._parts_len:
            self._emit(self._complete(b""), out)
        return out

    def _complete(self, last: bytes) -> bytes:
        """The held line with ``last`` appended; nothing is held afterwards."""
        big = self._big
        self._parts_len = 0
        if big is None:
            self._parts.append(last)
            line = b"".join(self._parts)
            self._parts = []
            return line
        self._big = None
        big += last
        return bytes(big)  # ``big`` is freed when this returns

    def _split(self, data: bytes, start: int, out: list[bytes | Oversized]) -> None:
        lines = data[start:].split(b"\n") if start else data.split(b"\n")
        rest = lines.pop()
        if len(data) - start > self._max:
            for line in lines:
                self._emit(line, out)
        elif b"\r" in data:
            for line in lines:
                if line:
                    if line[-1] == 13:  # b"\r"
                        line = line[:-1]
                    if line and (line[0] not in _WHITESPACE or line.strip()):
                        out.append(line)
        else:  # the common case: one comprehension, a JSON object line is kept at a glance
            out += [line for line in lines if line and (line[0] == 123 or line.strip())]
        if rest:
            self._hold(rest, out)

    def _emit(self, line: bytes, out: list[bytes | Oversized]) -> None:
        if line[-1:] == b"\r":
            line = line[:-1]
        if len(line) > self._max:
            out.append(Oversized(len(line), line[:HEAD_SIZE], line[-TAIL_SIZE:]))
        elif line.strip():
            out.append(line)

    def _hold(self, data: bytes, out: list[bytes | Oversized]) -> None:
        size = self._parts_len + len(data)
        if size > self._max:
            self._start_skipping(data)
        elif self._big is not None:
            self._big += data
        elif size > self._big_line:
            big = self._big = bytearray()
            for part in self._parts:
                big += part
            big += data
            self._parts = []
        else:
            self._parts.append(data)
        self._parts_len = 0 if self._skipping else size

    def _start_skipping(self, data: bytes) -> None:
        big = self._big
        held = self._parts
        if big is not None:  # its ends are all the diagnosis needs
            short = len(big) <= HEAD_SIZE + TAIL_SIZE
            held = [bytes(big)] if short else [bytes(big[:HEAD_SIZE]), bytes(big[-TAIL_SIZE:])]
        self._skipping = True
        self._skip_size = self._parts_len + len(data)
        self._head = b"".join(_prefix([*held, data], HEAD_SIZE))
        self._tail = b""
        for piece in (*held, data):  # every piece: the last one alone may be short
            self._tail = _keep_tail(self._tail, piece)
        self._parts = []
        self._big = None

    def _skip(self, data: bytes, out: list[bytes | Oversized]) -> int:
        """Discard bytes of an oversized line; return where the next line starts, or -1."""
        nl = data.find(b"\n")
        piece = data if nl < 0 else data[:nl]
        self._skip_size += len(piece)
        if len(self._head) < HEAD_SIZE:
            self._head += piece[: HEAD_SIZE - len(self._head)]
        self._tail = _keep_tail(self._tail, piece)
        if nl < 0:
            return -1
        tail, size = self._tail, self._skip_size
        if tail[-1:] == b"\r":
            tail, size = tail[:-1], size - 1
        out.append(Oversized(size, self._head, tail))
        self._skipping = False
        self._head = self._tail = b""
        return nl + 1


def _keep_tail(tail: bytes, piece: bytes) -> bytes:
    if len(piece) >= TAIL_SIZE:
        return piece[-TAIL_SIZE:]
    return (tail + piece)[-TAIL_SIZE:]


def _prefix(parts: list[bytes], size: int) -> list[bytes]:
    out: list[bytes] = []
    for part in parts:
        if size <= 0:
            break
        out.append(part[:size])
        size -= len(part)
    return out

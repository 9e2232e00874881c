"""The wire log of ``acp2 bridge --log FILE``: every frame both ways, and the agent's stderr.

One line per record, readable with ``tail -f`` and safe to print on a terminal (every
peer-chosen character passes :mod:`acp2.sanitize`)::

    2026-12-01T15:20:00.123Z client->agent v1 {"jsonrpc":"2.0","id":0,"method":"initialize",...}
    2026-12-01T15:20:00.456Z agent-stderr - loading model
    2026-12-01T15:20:00.457Z bridge - client v2, agent v1: translating (back bridge)

The fields are the UTC time, the direction (``client->agent`` / ``agent->client`` when
frames pass through unchanged; ``client->bridge``, ``bridge->agent``, ``agent->bridge``,
``bridge->client`` when the bridge translates), the protocol version of that side (``v1``,
``v2``, or ``-`` for stderr and the bridge's own notes) and the frame or text.

:class:`TappedTransport` logs what crosses a transport; the pass-through copier logs
through :meth:`WireLog.frames` itself.
"""

from __future__ import annotations

import time
from typing import IO, Final

from acp2 import sanitize
from acp2.transport.base import Transport

__all__ = ["LineSplitter", "TappedTransport", "WireLog"]

_NEWLINE: Final = b"\n"


def _stamp() -> str:
    now = time.time()
    whole = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now))
    return f"{whole}.{int(now * 1000) % 1000:03d}Z"


class WireLog:
    """Appends records to ``path`` (created if missing), flushed line by line.

    Callers may rely on: one record per call and line, in call order; nothing written
    after :meth:`close`; no exception from a record (a failing write closes the log)."""

    def __init__(self, path: str) -> None:
        self._file: IO[str] | None = open(path, "a", encoding="utf-8")  # noqa: SIM115 - close()

    def frames(self, direction: str, version: str, lines: list[bytes]) -> None:
        """Log complete frames (without their newline) sent in ``direction``."""
        for raw in lines:
            text = raw.rstrip(b"\r").decode("utf-8", "replace")
            self._write(f"{direction} {version} {sanitize.exact(text)}")

    def stderr(self, text: str) -> None:
        """Log one line the agent wrote on stderr."""
        self._write(f"agent-stderr - {sanitize.line(text)}")

    def note(self, text: str) -> None:
        """Log one of the bridge's own observations (the direction chosen, a dropped frame)."""
        self._write(f"bridge - {sanitize.line(text)}")

    def close(self) -> None:
        """Close the file (idempotent)."""
        if self._file is not None:
            self._file.close()
            self._file = None

    def _write(self, record: str) -> None:
        if self._file is None:
            return
        try:
            self._file.write(f"{_stamp()} {record}\n")
            self._file.flush()
        except OSError:
            self.close()  # a full disk must not take the bridge down


class LineSplitter:
    """Complete lines of a byte stream, for logging: ``feed`` returns the lines a chunk
    completed (without newlines). A line longer than ``limit`` is logged cut short."""

    def __init__(self, limit: int = 64 * 1024) -> None:
        self._pending = bytearray()
        self._limit = limit

    def feed(self, chunk: bytes) -> list[bytes]:
        """The lines ``chunk`` completes, in order."""
        if _NEWLINE not in chunk:
            self._keep(chunk)
            return []
        head, *middle, tail = chunk.split(_NEWLINE)
        self._keep(head)
        lines = [bytes(self._pending), *middle]
        self._pending = bytearray()
        self._keep(tail)
        return [line if len(line) <= self._limit else line[: self._limit] for line in lines]

    def _keep(self, part: bytes) -> None:
        room = self._limit + 1 - len(self._pending)
        if room > 0:
            self._pending += part[:room]


class TappedTransport:
    """``inner``, with every complete line received or sent logged to ``log``.

    ``received`` and ``sent`` name the two directions (e.g. ``client->bridge`` and
    ``bridge->client``); ``version`` is the side's protocol version. The bytes are
    passed on unchanged. It offers only the plain :class:`Transport` methods, so the
    connection over it takes the ordinary paths (a logged bridge is a debugging tool)."""

    def __init__(
        self, inner: Transport, log: WireLog, *, received: str, sent: str, version: str
    ) -> None:
        self.inner = inner
        self._log = log
        self._names = (received, sent, version)
        self._in = LineSplitter()
        self._out = LineSplitter()

    async def receive(self) -> bytes:
        """The inner transport's next chunk, its complete lines logged."""
        chunk = await self.inner.receive()
        if chunk:
            self._log.frames(self._names[0], self._names[2], self._in.feed(chunk))
        return chunk

    async def send(self, data: bytes) -> None:
        """Log the complete lines of ``data``, then send it on the inner transport."""
        self._log.frames(self._names[1], self._names[2], self._out.feed(data))
        await self.inner.send(data)

    async def aclose(self) -> None:
        """Close the inner transport."""
        await self.inner.aclose()

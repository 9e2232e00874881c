"""Continuous draining of a child's stderr (TR-05): a bounded tail plus optional forwarding.

An agent that logs heavily must never block on a full stderr pipe, so the pump reads it
as fast as it arrives, keeps the last ``tail_size`` bytes for :meth:`StderrPump.tail`
(error reports), and forwards it to the chosen sink:

* a callable gets each line as ``str`` (without its newline);
* a :class:`logging.Logger` gets each line at INFO;
* a binary file gets the bytes as they arrive; a text file gets them decoded.
"""

from __future__ import annotations

import codecs
import io
import logging
from collections.abc import Callable
from typing import IO, Any, Final, TypeAlias

import anyio

from acp2.transport._fdio import FdReader

__all__ = ["StderrPump", "StderrSink"]

logger = logging.getLogger("acp2.transport")

#: Where a spawned agent's stderr goes besides the tail buffer.
StderrSink: TypeAlias = Callable[[str], object] | logging.Logger | IO[str] | IO[bytes] | None

DEFAULT_TAIL_SIZE: Final = 64 * 1024
_MAX_LINE: Final = 64 * 1024


class StderrPump:
    """Drains one fd until EOF; see the module docstring."""

    def __init__(self, fd: int, sink: StderrSink, *, tail_size: int = DEFAULT_TAIL_SIZE) -> None:
        self._reader = FdReader(fd)
        self._tail = bytearray()
        self._tail_size = tail_size
        self._partial = b""
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._forward = self._choose(sink)
        self._finished = anyio.Event()

    def tail(self) -> str:
        """Return the last bytes of stderr seen so far, decoded (invalid UTF-8 replaced)."""
        return bytes(self._tail).decode("utf-8", "replace")

    @property
    def finished(self) -> bool:
        """True once :meth:`run` has seen end of stream (or was closed)."""
        return self._finished.is_set()

    async def wait_finished(self) -> None:
        """Return once :meth:`run` has seen end of stream (or was closed)."""
        await self._finished.wait()

    async def run(self) -> None:
        """Read until EOF (or :meth:`close`), keeping the tail and forwarding."""
        try:
            await self._pump()
        finally:
            self._finished.set()

    async def _pump(self) -> None:
        while chunk := await self._reader.read():
            self._keep(chunk)
            if self._forward is not None:
                try:
                    self._forward(chunk)
                except Exception:
                    logger.exception("forwarding agent stderr failed; forwarding stopped")
                    self._forward = None
        if self._partial and self._forward is not None:
            self._forward(b"\n")

    def close(self) -> None:
        """Stop reading and close the fd."""
        self._reader.close()

    def _keep(self, chunk: bytes) -> None:
        self._tail += chunk
        excess = len(self._tail) - self._tail_size
        if excess > 0:
            del self._tail[:excess]

    def _choose(self, sink: StderrSink) -> Callable[[bytes], None] | None:
        if sink is None:
            return None
        if isinstance(sink, logging.Logger):
            target = sink
            return self._by_line(lambda line: target.info("%s", line))
        if isinstance(sink, (io.RawIOBase, io.BufferedIOBase)) or "b" in getattr(sink, "mode", ""):
            return self._to_binary(sink)
        if hasattr(sink, "write"):
            return self._to_text(sink)
        assert callable(sink)
        return self._by_line(sink)

    def _by_line(self, emit: Callable[[str], Any]) -> Callable[[bytes], None]:
        def forward(chunk: bytes) -> None:
            lines = (self._partial + chunk).split(b"\n")
            self._partial = lines.pop()
            if len(self._partial) > _MAX_LINE:
                lines.append(self._partial)
                self._partial = b""
            for line in lines:
                emit(line.rstrip(b"\r").decode("utf-8", "replace"))

        return forward

    def _to_binary(self, sink: Any) -> Callable[[bytes], None]:
        def forward(chunk: bytes) -> None:
            sink.write(chunk)
            sink.flush()

        return forward

    def _to_text(self, sink: Any) -> Callable[[bytes], None]:
        def forward(chunk: bytes) -> None:
            sink.write(self._decoder.decode(chunk))
            sink.flush()

        return forward

"""A Transport wrapper that logs every message both ways in ``tap.py``'s JSON Lines format,
so the remote interop tests validate every frame with ``schema_validation.check_log`` as
the stdio ones do."""

from __future__ import annotations

import itertools
import json
import time
from pathlib import Path

from acp2.transport.base import Transport

from .wire import AGENT_TO_CLIENT, CLIENT_TO_AGENT


class TapTransport:
    """Pass bytes through to ``inner``; append each whole line to the log at ``path``."""

    def __init__(self, inner: Transport, path: Path) -> None:
        self.inner = inner
        self._log = path.open("a", encoding="utf-8")
        self._seq = itertools.count(1)
        self._partial = {CLIENT_TO_AGENT: b"", AGENT_TO_CLIENT: b""}

    def _record(self, direction: str, data: bytes) -> None:
        lines = (self._partial[direction] + data).split(b"\n")
        self._partial[direction] = lines.pop()
        for line in lines:
            if line.strip():
                record = {"seq": next(self._seq), "t": time.time(), "dir": direction}
                record["line"] = line.decode()
                self._log.write(json.dumps(record) + "\n")
        self._log.flush()

    async def receive(self) -> bytes:
        """The inner transport's next chunk, logged."""
        data = await self.inner.receive()
        self._record(AGENT_TO_CLIENT, data)
        return data

    async def send(self, data: bytes) -> None:
        """Log ``data``, then send it on the inner transport."""
        self._record(CLIENT_TO_AGENT, data)
        await self.inner.send(data)

    async def aclose(self) -> None:
        """Close the inner transport and the log."""
        await self.inner.aclose()
        self._log.close()

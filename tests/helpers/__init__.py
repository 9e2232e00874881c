"""Shared test helpers: two peers over a memory link, and a raw wire to poke one peer.

Import as ``from helpers import PeerPair, raw_peer`` (``tests/`` is on ``sys.path``).
Every wait in tests is bounded by :data:`helpers.timeouts.TIMEOUT` (re-exported here) or
one of its named multiples.

* :class:`PeerPair` runs two :class:`acp2.rpc.Connection` objects (``client`` and
  ``agent``) over :func:`acp2.transport.memory.memory_pair`, checks every frame either
  side writes with the strict JSON-RPC checker (:func:`helpers.wire.check_frame`) and
  records them in ``sent``.
* :func:`raw_peer` gives one Connection and a :class:`RawWire` on the other end of the
  link, to send arbitrary bytes and read back decoded frames.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import anyio

from acp2.rpc.connection import Connection
from acp2.rpc.framing import LineFramer
from acp2.transport.memory import MemoryTransport, memory_pair
from helpers.timeouts import TIMEOUT
from helpers.wire import check_frame

__all__ = ["TIMEOUT", "PeerPair", "RawWire", "check_frame", "raw_peer"]


class PeerPair:
    """Two connected Connections, ``client`` and ``agent``, over a memory pair."""

    def __init__(self, *, check: bool = True, **connection_kwargs: Any) -> None:
        self._check = check
        self._kwargs = connection_kwargs
        self.sent: list[tuple[str, bytes]] = []
        self.errors: list[str] = []
        self._stack = AsyncExitStack()

    def _tap(self, side: str) -> Any:
        def tap(direction: str, frame: bytes) -> None:
            if direction != "out":
                return
            self.sent.append((side, frame))
            if self._check:
                try:
                    check_frame(frame)
                except (AssertionError, ValueError) as exc:
                    self.errors.append(f"{side}: {frame[:200]!r}: {exc}")

        return tap

    def frames_from(self, side: str) -> list[Any]:
        """Return the decoded frames ``side`` ("client" or "agent") has written so far."""
        return [json.loads(frame) for who, frame in self.sent if who == side]

    async def __aenter__(self) -> PeerPair:
        a, b = memory_pair()
        self.client = Connection(a, name="client", tap=self._tap("client"), **self._kwargs)
        self.agent = Connection(b, name="agent", tap=self._tap("agent"), **self._kwargs)
        await self._stack.__aenter__()
        await self._stack.enter_async_context(self.client)
        await self._stack.enter_async_context(self.agent)
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        await self._stack.__aexit__(*exc_info)
        assert not self.errors, "invalid frames on the wire:\n" + "\n".join(self.errors)


class RawWire:
    """The raw end of a link: write any bytes, read back checked, decoded frames."""

    def __init__(self, transport: MemoryTransport) -> None:
        self.transport = transport
        self._framer = LineFramer()
        self._ready: list[bytes] = []
        self._pings = 0

    async def send(self, data: bytes) -> None:
        """Write raw bytes to the connection under test."""
        await self.transport.send(data)

    async def send_json(self, value: Any) -> None:
        """Write one JSON value as a line."""
        await self.send(json.dumps(value).encode() + b"\n")

    async def frame(self) -> Any:
        """Return the next frame the connection wrote, decoded (fails after TIMEOUT)."""
        with anyio.fail_after(TIMEOUT):
            while not self._ready:
                chunk = await self.transport.receive()
                assert chunk, "the connection closed its end"
                self._ready.extend(bytes(x) for x in self._framer.feed(chunk))
        return check_frame(self._ready.pop(0))

    async def ping(self) -> None:
        """Prove the connection wrote nothing since the last read.

        Messages are handled in order, so the next frame must answer this ping; anything
        else (e.g. an answer to a notification) fails the test.
        """
        self._pings += 1
        rid = f"ping-{self._pings}"
        await self.send_json({"jsonrpc": "2.0", "id": rid, "method": "test/ping"})
        frame = await self.frame()
        assert isinstance(frame, dict), f"unexpected frame {frame!r}"
        assert frame.get("id") == rid, f"unexpected frame {frame!r}"

    async def at_eof(self) -> bool:
        """Return True once the connection closed its end (fails after TIMEOUT)."""
        with anyio.fail_after(TIMEOUT):
            return await self.transport.receive() == b""


@asynccontextmanager
async def raw_peer(**connection_kwargs: Any) -> AsyncIterator[tuple[Connection, RawWire]]:
    """Yield ``(connection, wire)``: a Connection and the raw other end of its link."""
    a, b = memory_pair()
    async with Connection(a, name="under-test", **connection_kwargs) as conn:
        yield conn, RawWire(b)

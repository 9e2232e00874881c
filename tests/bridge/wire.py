"""A raw JSON-RPC line peer for the bridge tests: sends dicts, keeps every frame read."""

from __future__ import annotations

import json
from typing import Any

import anyio

from acp2.transport.base import Transport
from helpers.timeouts import TIMEOUT

ZED_INITIALIZE: dict[str, Any] = {
    "protocolVersion": 1,
    "clientInfo": {"name": "zed", "title": "Zed", "version": "0.200.0"},
    "clientCapabilities": {
        "fs": {"readTextFile": True, "writeTextFile": True},
        "terminal": True,
    },
}


class Wire:
    """Line-level access to a transport: ``frames`` holds every message read, in order."""

    def __init__(self, transport: Transport) -> None:
        self.transport = transport
        self.frames: list[dict[str, Any]] = []
        self._buffer = b""
        self._next_id = 0
        #: Request id -> method, of every request sent (for the schema check of answers).
        self.asked: dict[Any, str] = {}

    async def send(self, message: dict[str, Any]) -> None:
        if "id" in message:
            self.asked[message["id"]] = message["method"]
        await self.transport.send(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")

    async def request(self, method: str, params: Any) -> dict[str, Any]:
        """Send a request and return its answer (every frame before it is in ``frames``)."""
        rid = self._next_id
        self._next_id += 1
        await self.send({"id": rid, "method": method, "params": params})
        return await self.answer(rid)

    async def answer(self, rid: Any) -> dict[str, Any]:
        return await self.until(lambda m: m.get("id") == rid and "method" not in m)

    async def until(self, predicate: Any) -> dict[str, Any]:
        with anyio.fail_after(TIMEOUT):
            while True:
                frame = await self._read()
                self.frames.append(frame)
                if predicate(frame):
                    return frame

    async def _read(self) -> dict[str, Any]:
        while b"\n" not in self._buffer:
            chunk = await self.transport.receive()
            assert chunk, "the agent closed the connection"
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        frame: dict[str, Any] = json.loads(line)
        return frame

    def updates(self, kind: str | None = None) -> list[dict[str, Any]]:
        return [
            f["params"]["update"]
            for f in self.frames
            if f.get("method") == "session/update"
            and (kind is None or f["params"]["update"]["sessionUpdate"] == kind)
        ]

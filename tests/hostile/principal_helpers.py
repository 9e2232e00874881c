"""Two users of one ``acp2 serve`` application: the test agent with a SQLite history file,
served under a real uvicorn on 127.0.0.1 with one bearer token per principal, and a raw
WebSocket peer that sends whatever JSON-RPC it likes (the hostile user)."""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
from websockets.asyncio.client import ClientConnection, connect

from acp2.agent import Agent
from acp2.serve import ServeConfig, create_app
from acp2.testing.scenarios import build_test_agent
from helpers.timeouts import TIMEOUT

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "serve"))

from serve_helpers import Served, serve

__all__ = ["TOKENS", "RawPeer", "Served", "raw_peer", "served_agent"]

#: alice and bob are two users; carol is the one alice lets watch her sessions.
TOKENS = {"alice-token": "alice", "bob-token": "bob", "carol-token": "carol"}


@contextlib.asynccontextmanager
async def served_agent(
    store: Path | str, tokens: dict[str, str] | None = None, **settings: Any
) -> AsyncIterator[Served]:
    """The test agent (history in ``store``: a SQLite file or a PostgreSQL URL;
    ``settings`` set on it) served with
    ``tokens`` (default :data:`TOKENS`; ``{}``: tokenless) on a loopback port."""
    agent: Agent = build_test_agent(str(store))
    for name, value in settings.items():
        setattr(agent, name, value)
    config = ServeConfig(tokens=TOKENS if tokens is None else tokens)
    try:
        async with serve(create_app(agent, config=config)) as served:
            yield served
    finally:
        agent.history().close()


class RawPeer:
    """An initialized WebSocket client that sends raw JSON-RPC and keeps every frame the
    server sends it that is not the answer it waits for (``seen``)."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.seen: list[dict[str, Any]] = []
        self._ids = 100

    async def send(self, message: dict[str, Any]) -> None:
        """Send one JSON-RPC message as is."""
        await self.ws.send(json.dumps(message))

    async def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Send a request; return its whole response (``result`` or ``error``)."""
        self._ids += 1
        request_id = self._ids
        await self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        with anyio.fail_after(TIMEOUT):
            while True:
                frame = json.loads(await self.ws.recv())
                if frame.get("id") == request_id and "method" not in frame:
                    return dict(frame)
                self.seen.append(frame)

    def texts(self) -> str:
        """Everything the server sent this peer besides answers, as one JSON text."""
        return json.dumps(self.seen)


@contextlib.asynccontextmanager
async def raw_peer(served: Served, token: str | None) -> AsyncIterator[RawPeer]:
    """A :class:`RawPeer` on ``served``'s WebSocket, with ``token`` as its bearer."""
    headers = {"authorization": f"Bearer {token}"} if token else {}
    async with connect(served.ws_url, additional_headers=headers) as ws:
        peer = RawPeer(ws)
        info = {"name": "raw-peer", "version": "1"}
        answer = await peer.call(
            "initialize", {"protocolVersion": 2, "info": info, "capabilities": {}}
        )
        assert "result" in answer, answer
        yield peer

"""Helpers for the history-store attacks: a raw recording client on a real agent.

``raw_agent(argv)`` starts an agent subprocess (``acp2 test-agent`` unless told) and
yields a :class:`Recorder`: an :class:`acp2.rpc.Connection` whose tap keeps every frame
the agent wrote, with its size, so tests can check what went over the wire.
``seed_message`` stores one streamed agent message in a history file the way a streaming
agent stores it (one row per flush).
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import msgspec

from acp2.agent import HistoryStore
from acp2.rpc import Connection
from acp2.schema import AgentMessageChunk, TextContent
from acp2.schema.codec import encode
from acp2.transport.stdio import AgentProcess, spawn_agent
from helpers.timeouts import SCENARIO_TIMEOUT as TIMEOUT

__all__ = ["Recorder", "agent_argv", "raw_agent", "seed_message"]


def agent_argv(store: Path) -> list[str]:
    """``acp2 test-agent --store store`` with this interpreter."""
    return [sys.executable, "-m", "acp2", "test-agent", "--store", str(store)]


class Recorder:
    """The client end: ``call`` requests; ``sizes`` / ``messages`` of the agent's frames."""

    def __init__(self) -> None:
        self.connection: Connection | None = None
        self.process: AgentProcess | None = None
        self.sizes: list[int] = []
        self.messages: list[dict[str, Any]] = []

    def tap(self, direction: str, frame: bytes) -> None:
        """Record each frame the agent wrote."""
        if direction == "in":
            self.sizes.append(len(frame))
            self.messages.append(json.loads(frame))

    async def call(self, method: str, params: Any) -> Any:
        """Send a request; return its decoded result (raises the agent's RequestError)."""
        assert self.connection is not None
        raw = await self.connection.request(method, params, msgspec.Raw)
        return json.loads(bytes(raw))

    def updates(self) -> list[dict[str, Any]]:
        """Every ``update`` the agent sent, in order."""
        return [m["params"]["update"] for m in self.messages if m.get("method") == "session/update"]


@asynccontextmanager
async def raw_agent(argv: list[str], cwd: Path | None = None) -> AsyncIterator[Recorder]:
    """Start ``argv`` and yield an initialized :class:`Recorder` on it."""
    recorder = Recorder()
    async with spawn_agent(argv, cwd=cwd, grace=TIMEOUT) as process:
        connection = Connection(process, name="agent", tap=recorder.tap)
        recorder.connection, recorder.process = connection, process
        async with connection:
            await recorder.call(
                "initialize", {"protocolVersion": 2, "info": {"name": "hostile", "version": "1"}}
            )
            yield recorder


def seed_message(store: Path, cwd: Path, chunks: list[str], per_flush: int = 1000) -> str:
    """Store a session holding one agent message streamed as ``chunks``; return its id."""
    history = HistoryStore(store)
    session_id = "sess_seeded"
    history.create_session(session_id, str(cwd), [])
    for start in range(0, len(chunks), per_flush):
        for text in chunks[start : start + per_flush]:
            chunk = AgentMessageChunk(message_id="agent_long", content=TextContent(text=text))
            history.append(session_id, encode(chunk))
        history.flush()
    history.close()
    return session_id

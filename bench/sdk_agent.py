"""Bench agent on the official Python SDK (``agent-client-protocol==0.12.1``, ACP v1).

Runs in the SDK's own venv (see ``_provision.py``) on its stdio, written the way the SDK's
docs show: an ``Agent`` class served by ``acp.run_agent``, updates sent one by one with
``await conn.session_update(...)``. It implements the bench peer contract of
``_common.py``: ``"stream N"`` prompts, ``_bench/ping``, ``_bench/stats``, ``_bench/seed``
and ``session/load`` replay (v1's form of resume with full replay).
"""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import acp  # type: ignore[import-not-found,unused-ignore]
from acp.schema import (  # type: ignore[import-not-found,unused-ignore]
    AgentCapabilities,
    AgentMessageChunk,
    InitializeResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PromptResponse,
    TextContentBlock,
    UserMessageChunk,
)

from _common import chunk_text, parse_stream_prompt, self_stats


class BenchAgent:
    """A v1 agent that streams the requested number of chunks per prompt."""

    def __init__(self) -> None:
        self._conn: Any = None
        self._ids = itertools.count(1)
        self._history: dict[str, list[Any]] = {}

    def on_connect(self, conn: Any) -> None:
        """Keep the connection used to send updates to the client."""
        self._conn = conn

    async def initialize(self, protocol_version: int, **kwargs: Any) -> Any:
        """Accept the client's version; advertise ``loadSession`` (needed for replay)."""
        return InitializeResponse(
            protocol_version=acp.PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(load_session=True),
        )

    async def new_session(self, cwd: str, **kwargs: Any) -> Any:
        """Create an empty session."""
        session_id = f"sess_{next(self._ids)}"
        self._history[session_id] = []
        return NewSessionResponse(session_id=session_id)

    async def load_session(self, cwd: str, session_id: str, **kwargs: Any) -> Any:
        """Replay the stored conversation as updates, then answer."""
        for update in self._history.get(session_id, []):
            await self._conn.session_update(session_id=session_id, update=update)
        return LoadSessionResponse()

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> Any:
        """Stream N chunks of one agent message for a ``"stream N"`` prompt; end the turn."""
        text = getattr(prompt[0], "text", "") if prompt else ""
        message_id = f"msg_agent_{next(self._ids)}"
        for i in range(parse_stream_prompt(text)):
            update = AgentMessageChunk(
                session_update="agent_message_chunk",
                message_id=message_id,
                content=TextContentBlock(type="text", text=chunk_text(i)),
            )
            await self._conn.session_update(session_id=session_id, update=update)
        return PromptResponse(stop_reason="end_turn")

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        """Nothing runs long enough to cancel."""

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Serve ``_bench/ping``, ``_bench/stats`` and ``_bench/seed``."""
        if method == "bench/ping":
            return {}
        if method == "bench/stats":
            return self_stats(bool(params.get("gc")))
        if method == "bench/seed":
            self._history[params["sessionId"]] = seed_history(int(params["count"]))
            return {}
        raise acp.RequestError.method_not_found(f"_{method}")

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        """Ignore extension notifications."""


def seed_history(count: int) -> list[Any]:
    """Return a stored conversation of ``count`` updates: alternating user/agent messages."""
    history: list[Any] = []
    for i in range(count):
        kind = UserMessageChunk if i % 2 == 0 else AgentMessageChunk
        history.append(
            kind(
                session_update="user_message_chunk" if i % 2 == 0 else "agent_message_chunk",
                message_id=f"msg_{i}",
                content=TextContentBlock(type="text", text=f"stored message {i}"),
            )
        )
    return history


if __name__ == "__main__":
    asyncio.run(acp.run_agent(BenchAgent()))

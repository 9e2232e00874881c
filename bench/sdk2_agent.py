"""Bench agent on the official Python SDK 1.0.0rc3 (``acp.experimental.v2``, ACP v2).

Runs in the SDK's own venv (``_provision.ensure_sdk2_venv``) on its stdio, written the
way the SDK's API reads: an agent object with one method per ACP method, served by
``acp.experimental.v2.run_agent``, every update sent with ``await
conn.session_update(...)`` built from the SDK's models. It implements the bench peer
contract of ``_common.py`` as the TypeScript bench agent does: a prompt is answered with
its ``messageId`` while a task runs the turn (``user_message``, ``running``, N
``agent_message_chunk``, ``idle end_turn``; like the TS agent's, the turn's first updates
may reach the wire before the response), ``_bench/ping``, ``_bench/stats``,
``_bench/seed``, and ``session/resume`` with ``replayFrom: {type: "start"}`` replays the
stored conversation, sends a state snapshot, then answers. History lives in memory.
"""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

from acp.exceptions import RequestError  # type: ignore[import-not-found,unused-ignore]
from acp.experimental.v2 import (  # type: ignore[import-not-found,unused-ignore]
    PROTOCOL_VERSION,
    run_agent,
    schema,
)

from _common import chunk_text, parse_stream_prompt, self_stats


class BenchAgent:
    """A v2 agent that streams the requested number of chunks per prompt."""

    def __init__(self) -> None:
        self._conn: Any = None
        self._ids = itertools.count(1)
        self._history: dict[str, list[Any]] = {}
        self._turns: set[asyncio.Task[None]] = set()

    def on_connect(self, conn: Any) -> None:
        """Keep the connection used to send updates to the client."""
        self._conn = conn

    async def initialize(self, protocol_version: int, **kwargs: Any) -> Any:
        """Answer with the SDK's protocol version and no optional capabilities."""
        info = schema.Implementation(name="acp2-bench-py-sdk2-agent", version="0")
        return schema.InitializeResponse(protocol_version=PROTOCOL_VERSION, info=info)

    async def new_session(self, cwd: str, **kwargs: Any) -> Any:
        """Create an empty session."""
        session_id = f"sess_{next(self._ids)}"
        self._history[session_id] = []
        return schema.NewSessionResponse(session_id=session_id)

    async def resume_session(
        self, session_id: str, cwd: str, replay_from: Any = None, **kwargs: Any
    ) -> Any:
        """Replay the stored conversation (when asked), send the idle snapshot, answer."""
        if replay_from is not None:
            for update in self._history.get(session_id, []):
                await self._conn.session_update(session_id=session_id, update=update)
        idle = schema.IdleSessionStateUpdate()
        await self._conn.session_update(session_id=session_id, update=idle)
        return schema.ResumeSessionResponse()

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> Any:
        """Start the turn in a task and answer with the user message's id."""
        message_id = f"msg_user_{next(self._ids)}"
        task = asyncio.create_task(self._turn(session_id, message_id, prompt))
        self._turns.add(task)
        task.add_done_callback(self._turns.discard)
        return schema.PromptResponse(message_id=message_id)

    async def _turn(self, session_id: str, user_message_id: str, prompt: list[Any]) -> None:
        send = self._conn.session_update
        user = schema.UserMessageUpdate(message_id=user_message_id, content=prompt)
        await send(session_id=session_id, update=user)
        await send(session_id=session_id, update=schema.RunningSessionStateUpdate())
        text = getattr(prompt[0], "text", "") if prompt else ""
        message_id = f"msg_agent_{next(self._ids)}"
        for i in range(parse_stream_prompt(text)):
            block = schema.TextContentBlock(type="text", text=chunk_text(i))
            chunk = schema.AgentMessageChunk(message_id=message_id, content=block)
            await send(session_id=session_id, update=chunk)
        idle = schema.IdleSessionStateUpdate(stop_reason="end_turn")
        await send(session_id=session_id, update=idle)

    async def cancel_session(self, session_id: str, **kwargs: Any) -> None:
        """Nothing runs long enough to cancel."""

    async def handle_extension_request(self, method: str, params: Any) -> Any:
        """Serve ``_bench/ping``, ``_bench/stats`` and ``_bench/seed``."""
        params = params if isinstance(params, dict) else {}
        if method == "_bench/ping":
            return {}
        if method == "_bench/stats":
            return self_stats(bool(params.get("gc")))
        if method == "_bench/seed":
            self._history[params["sessionId"]] = seed_history(int(params["count"]))
            return {}
        raise RequestError.method_not_found(method)

    async def handle_extension_notification(self, method: str, params: Any) -> None:
        """Ignore extension notifications."""


def seed_history(count: int) -> list[Any]:
    """Return a stored conversation of ``count`` whole messages, alternating user / agent."""
    history: list[Any] = []
    for i in range(count):
        kind = schema.UserMessageUpdate if i % 2 == 0 else schema.AgentMessageUpdate
        block = schema.TextContentBlock(type="text", text=f"stored message {i}")
        history.append(kind(message_id=f"msg_{i}", content=[block]))
    return history


if __name__ == "__main__":
    asyncio.run(run_agent(BenchAgent()))

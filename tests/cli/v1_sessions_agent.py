"""A scripted ACP v1 agent on stdio whose sessions outlive its process.

Built on acp2's own ``Connection`` with the v1 method table. Each prompt is answered
``"echo: <prompt text>"`` and ``end_turn``; the conversation is kept in
``<state dir>/<session id>.json`` so that a second process can ``session/load`` it.

Flags (after the state directory):

- ``--load``: advertise ``loadSession``; ``session/load`` replays the conversation
  (``user_message_chunk`` / ``agent_message_chunk``) before it answers.
- ``--fail-load REASON``: ``session/load`` answers ``-32603 "Internal error"`` with the
  reason only in ``data.details`` (as the official SDKs' agents do).
- ``--null METHOD``: answer ``null`` to ``METHOD`` (``session/new``, ``session/list``,
  ``session/resume``, ``session/close``, ``session/load``), as the official Python SDK
  0.12.1 example agent does for the methods it does not implement.
- ``--advertise CAP``: advertise ``sessionCapabilities.CAP`` (``list``, ``resume``,
  ``close``) whether or not it is served.

Every other request gets the v1 table's ``-32601``.
"""

from __future__ import annotations

import json
import sys
import uuid
from pathlib import Path
from typing import Any

import anyio
from msgspec import UNSET

import acp2.compat.v1.methods as v1m
import acp2.compat.v1.schema as v1
from acp2.errors import internal_error
from acp2.rpc import Connection
from acp2.transport.stdio import serve_stdio


class SessionsAgent:
    def __init__(self, conn: Connection, state: Path, flags: list[str]) -> None:
        self.conn = conn
        self.state = state
        self.flags = flags
        nulls = {flags[i + 1] for i, flag in enumerate(flags) if flag == "--null"}
        handlers: dict[str, Any] = {
            v1m.SESSION_NEW.name: self.new,
            v1m.SESSION_PROMPT.name: self.prompt,
            v1m.SESSION_LOAD.name: self.load,
        }
        conn.on(v1m.INITIALIZE, self.initialize)
        for spec in (v1m.SESSION_NEW, v1m.SESSION_PROMPT, v1m.SESSION_LOAD):
            conn.on(spec, self.null if spec.name in nulls else handlers[spec.name])
        for spec in (v1m.SESSION_LIST, v1m.SESSION_RESUME, v1m.SESSION_CLOSE):
            if spec.name in nulls:
                conn.on(spec, self.null)

    def option(self, name: str) -> str | None:
        return self.flags[self.flags.index(name) + 1] if name in self.flags else None

    async def initialize(self, params: v1.InitializeRequest) -> v1.InitializeResponse:
        advertised = {self.flags[i + 1] for i, f in enumerate(self.flags) if f == "--advertise"}
        extra = v1.SessionCapabilities(
            list=v1.SessionListCapabilities() if "list" in advertised else UNSET,
            resume=v1.SessionResumeCapabilities() if "resume" in advertised else UNSET,
            close=v1.SessionCloseCapabilities() if "close" in advertised else UNSET,
        )
        loads = "--load" in self.flags or "--fail-load" in self.flags
        return v1.InitializeResponse(
            protocol_version=1,
            agent_info=v1.Implementation(name="v1-sessions-agent", version="1"),
            agent_capabilities=v1.AgentCapabilities(load_session=loads, session_capabilities=extra),
        )

    async def null(self, params: Any) -> None:
        return None

    def path(self, session_id: str) -> Path:
        return self.state / f"{session_id}.json"

    async def new(self, params: v1.NewSessionRequest) -> v1.NewSessionResponse:
        session_id = f"s-{uuid.uuid4().hex[:8]}"
        self.path(session_id).write_text("[]")
        return v1.NewSessionResponse(session_id=session_id)

    async def prompt(self, params: v1.PromptRequest) -> v1.PromptResponse:
        path = self.path(params.session_id)
        said = " ".join(b.text for b in params.prompt if isinstance(b, v1.TextContent))
        reply = f"echo: {said}"
        await self.say(params.session_id, v1.AgentMessageChunk(content=v1.TextContent(text=reply)))
        history = json.loads(path.read_text())
        path.write_text(json.dumps([*history, said, reply]))
        return v1.PromptResponse(stop_reason="end_turn")

    async def load(self, params: v1.LoadSessionRequest) -> v1.LoadSessionResponse:
        reason = self.option("--fail-load")
        if reason is not None:
            raise failure(reason)
        path = self.path(params.session_id)
        if not path.exists():
            raise failure("no such session")
        history = json.loads(path.read_text())
        for i, text in enumerate(history):
            kind = v1.UserMessageChunk if i % 2 == 0 else v1.AgentMessageChunk
            await self.say(params.session_id, kind(content=v1.TextContent(text=text)))
        return v1.LoadSessionResponse()

    async def say(self, session_id: str, update: Any) -> None:
        note = v1.SessionNotification(session_id=session_id, update=update)
        await self.conn.notify(v1m.SESSION_UPDATE, note)


def failure(reason: str) -> Exception:
    """-32603 with a bare message, the reason only in ``data``."""
    error = internal_error("Internal error")
    error.data = {"details": reason}
    return error


async def main() -> None:
    state = Path(sys.argv[1])
    async with serve_stdio() as transport:
        conn = Connection(transport, name="v1 sessions agent")
        SessionsAgent(conn, state, sys.argv[2:])
        async with conn:
            await conn.wait_closed()


if __name__ == "__main__":
    anyio.run(main)

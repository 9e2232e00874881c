"""A scripted ACP v1 agent on stdio that asks to write a new file as Gemini CLI does.

Built on acp2's own ``Connection`` with the v1 method table. Each prompt asks
``session/request_permission`` for a tool call it never announced, whose only content is
the proposed diff (``oldText: ""``, ``_meta.kind: "add"``, as Gemini CLI sends a new
file), with the file as its location. Allowed, it writes ``new.txt`` under the session's
cwd itself, reports the call ``completed`` and says ``wrote new.txt``; otherwise it
reports the call ``failed`` and says ``declined``. Either way the turn ends ``end_turn``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio

import acp2.compat.v1.methods as v1m
import acp2.compat.v1.schema as v1
from acp2.rpc import Connection
from acp2.transport.stdio import serve_stdio

SESSION = "v1-write-session"
NEW_TEXT = "hello from the write agent\n"


class WriteAgent:
    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self.cwd = ""
        conn.on(v1m.INITIALIZE, self.initialize)
        conn.on(v1m.SESSION_NEW, self.new)
        conn.on(v1m.SESSION_PROMPT, self.prompt)

    async def initialize(self, params: v1.InitializeRequest) -> v1.InitializeResponse:
        return v1.InitializeResponse(
            protocol_version=1, agent_info=v1.Implementation(name="v1-write-agent", version="1")
        )

    async def new(self, params: v1.NewSessionRequest) -> v1.NewSessionResponse:
        self.cwd = params.cwd
        return v1.NewSessionResponse(session_id=SESSION)

    async def prompt(self, params: v1.PromptRequest) -> v1.PromptResponse:
        path = str(Path(self.cwd) / "new.txt")
        diff = v1.Diff(path=path, old_text="", new_text=NEW_TEXT, meta={"kind": "add"})
        call = v1.ToolCallUpdate(
            tool_call_id="write-1",
            title="Writing to new.txt",
            kind="edit",
            status="pending",
            content=[diff],
            locations=[v1.ToolCallLocation(path=path)],
        )
        options = [
            v1.PermissionOption(option_id="proceed_once", name="Allow", kind="allow_once"),
            v1.PermissionOption(option_id="cancel", name="Reject", kind="reject_once"),
        ]
        asked = v1.RequestPermissionRequest(session_id=SESSION, tool_call=call, options=options)
        answer = await self.conn.call(v1m.SESSION_REQUEST_PERMISSION, asked)
        outcome = answer.outcome
        allowed = getattr(outcome, "option_id", None) == "proceed_once"
        if allowed:
            await anyio.Path(path).write_text(NEW_TEXT)
        status = "completed" if allowed else "failed"
        await self.update(
            v1.SessionToolCallUpdate(tool_call_id="write-1", status=status, content=[diff])
        )
        text = "wrote new.txt" if allowed else "declined"
        await self.update(v1.AgentMessageChunk(content=v1.TextContent(text=text)))
        return v1.PromptResponse(stop_reason="end_turn")

    async def update(self, update: Any) -> None:
        note = v1.SessionNotification(session_id=SESSION, update=update)
        await self.conn.notify(v1m.SESSION_UPDATE, note)


async def main() -> None:
    async with serve_stdio() as transport, Connection(transport, name="v1-write-agent") as conn:
        WriteAgent(conn)
        await conn.wait_closed()


if __name__ == "__main__":
    anyio.run(main)

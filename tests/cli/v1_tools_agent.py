"""A scripted ACP v1 agent on stdio that uses its client's files and terminals.

Built on acp2's own ``Connection`` with the v1 method table. Each prompt: read
``notes.txt`` (``fs/read_text_file``), write ``out.txt`` (``fs/write_text_file``), run
``python -c "print('from the terminal')"`` in a terminal (create, wait for exit, output,
release), announce a tool call showing that terminal, then answer one message:
``read=...; wrote=...; terminal=...; exit=...``, each part the result or
``error <code>``, and ``end_turn``. It calls the methods whatever the client offered,
so a test sees what a client that does not serve them answers.
"""

from __future__ import annotations

import sys
from typing import Any

import anyio

import acp2.compat.v1.methods as v1m
import acp2.compat.v1.schema as v1
from acp2.errors import RequestError
from acp2.rpc import Connection
from acp2.transport.stdio import serve_stdio

SESSION = "v1-tools-session"


class ToolsAgent:
    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self.cwd = ""
        conn.on(v1m.INITIALIZE, self.initialize)
        conn.on(v1m.SESSION_NEW, self.new)
        conn.on(v1m.SESSION_PROMPT, self.prompt)

    async def initialize(self, params: v1.InitializeRequest) -> v1.InitializeResponse:
        return v1.InitializeResponse(
            protocol_version=1, agent_info=v1.Implementation(name="v1-tools-agent", version="1")
        )

    async def new(self, params: v1.NewSessionRequest) -> v1.NewSessionResponse:
        self.cwd = params.cwd
        return v1.NewSessionResponse(session_id=SESSION)

    async def prompt(self, params: v1.PromptRequest) -> v1.PromptResponse:
        read = await self.attempt(self.read)
        wrote = await self.attempt(self.write)
        terminal = await self.attempt(self.run)
        text = f"read={read}; wrote={wrote}; {terminal}"
        chunk = v1.AgentMessageChunk(content=v1.TextContent(text=text))
        await self.update(chunk)
        return v1.PromptResponse(stop_reason="end_turn")

    async def attempt(self, step: Any) -> str:
        try:
            return str(await step())
        except RequestError as exc:
            return f"error {exc.code}"

    async def read(self) -> str:
        request = v1.ReadTextFileRequest(session_id=SESSION, path=f"{self.cwd}/notes.txt")
        return (await self.conn.call(v1m.FS_READ_TEXT_FILE, request)).content.strip()

    async def write(self) -> str:
        request = v1.WriteTextFileRequest(
            session_id=SESSION, path=f"{self.cwd}/out.txt", content="written by the agent\n"
        )
        await self.conn.call(v1m.FS_WRITE_TEXT_FILE, request)
        return "out.txt"

    async def run(self) -> str:
        create = v1.CreateTerminalRequest(
            session_id=SESSION,
            command=sys.executable,
            args=["-c", "print('from the terminal')"],
        )
        terminal_id = (await self.conn.call(v1m.TERMINAL_CREATE, create)).terminal_id
        ids = {"session_id": SESSION, "terminal_id": terminal_id}
        exited = await self.conn.call(
            v1m.TERMINAL_WAIT_FOR_EXIT, v1.WaitForTerminalExitRequest(**ids)
        )
        output = await self.conn.call(v1m.TERMINAL_OUTPUT, v1.TerminalOutputRequest(**ids))
        await self.update(
            v1.ToolCall(
                tool_call_id="run-1",
                title="Run a command",
                kind="execute",
                status="completed",
                content=[v1.Terminal(terminal_id=terminal_id)],
            )
        )
        await self.conn.call(v1m.TERMINAL_RELEASE, v1.ReleaseTerminalRequest(**ids))
        return f"terminal={output.output.strip()}; exit={exited.exit_code}"

    async def update(self, update: Any) -> None:
        note = v1.SessionNotification(session_id=SESSION, update=update)
        await self.conn.notify(v1m.SESSION_UPDATE, note)


async def main() -> None:
    async with serve_stdio() as transport, Connection(transport, name="v1-tools-agent") as conn:
        ToolsAgent(conn)
        await conn.wait_closed()


if __name__ == "__main__":
    anyio.run(main)

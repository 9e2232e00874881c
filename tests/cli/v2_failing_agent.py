"""A scripted ACP v2 agent on stdio that fails the way the official SDKs' agents fail:
``-32603 "Internal error"``, the reason only in ``data.details`` (the reason is this
script's first argument). Its ``session/new`` fails; with ``--prompt`` as the second
argument ``session/new`` works and each prompt ends ``idle`` with stop reason ``error``
and that error instead. Built on acp2's own ``Connection`` with the v2 method table."""

from __future__ import annotations

import sys
from typing import Any

import anyio

import acp2.schema as v2
import acp2.schema.methods as v2m
from acp2.errors import internal_error
from acp2.rpc import Connection
from acp2.transport.stdio import serve_stdio


async def initialize(params: v2.InitializeRequest) -> v2.InitializeResponse:
    return v2.InitializeResponse(
        protocol_version=2,
        info=v2.Implementation(name="v2-failing-agent", version="1"),
        capabilities=v2.AgentCapabilities(session=v2.SessionCapabilities()),
    )


async def new(params: v2.NewSessionRequest) -> v2.NewSessionResponse:
    if sys.argv[2:] == ["--prompt"]:
        return v2.NewSessionResponse(session_id="s-1")
    error = internal_error("Internal error")
    error.data = {"details": sys.argv[1]}
    raise error


def prompter(conn: Connection) -> Any:
    async def prompt(params: v2.PromptRequest) -> v2.PromptResponse:
        error = v2.Error(code=-32603, message="Internal error", data={"details": sys.argv[1]})
        for state in (
            v2.StateUpdate(state="running"),
            v2.StateUpdate(state="idle", stop_reason="error", error=error),
        ):
            note = v2.UpdateSessionNotification(session_id=params.session_id, update=state)
            conn.send_notification_nowait(v2m.SESSION_UPDATE, note)
        return v2.PromptResponse(message_id="m-1")

    return prompt


async def main() -> None:
    async with serve_stdio() as transport, Connection(transport, name="v2-failing") as conn:
        conn.on(v2m.INITIALIZE, initialize)
        conn.on(v2m.SESSION_NEW, new)
        conn.on(v2m.SESSION_PROMPT, prompter(conn))
        await conn.wait_closed()


if __name__ == "__main__":
    anyio.run(main)

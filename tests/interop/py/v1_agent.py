"""acp2 interop test agent: ACP v1 on stdio, built on the official Python SDK 0.12.1.

    python v1_agent.py        (in the venv of requirements-v1.txt)

A deterministic peer written from the SDK's documented API (``acp.run_agent``, the
``Agent`` handlers, the ``acp.helpers`` update builders). The scenario is the first
word of the prompt, as for the v2 agents, in v1's shape: ``session/prompt`` is held
open until the turn ends and answered with its ``stopReason``; no user message echo,
no state updates; a tool call is created with ``tool_call`` and patched with
``tool_call_update``.

    echo <text>  one agent_message_chunk          stream <n>  n chunks "0," "1," ...
    tools        tool_call (pending), session/request_permission (allow_once /
                 reject_once); allowed: in_progress, a diff, completed; rejected:
                 failed; outcome cancelled or session/cancel: failed too (v1's
                 tool statuses have no "cancelled"), and the prompt ends "cancelled"
    wait         runs until session/cancel        kinds  a thought, a plan, commands,
    fail         the prompt is answered with a JSON-RPC error (v1 has no error stop)
    anything else is echoed back whole

``session/load`` replays the conversation (the prompts as ``user_message_chunk``)
before its response.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass, field
from typing import Any

from acp import PROTOCOL_VERSION, RequestError, helpers, run_agent, schema
from peer_common import Ids, log, prompt_text, split_scenario

NAME = "py-v1-agent"
OPTIONS = [
    schema.PermissionOption(option_id="allow", name="Allow once", kind="allow_once"),
    schema.PermissionOption(option_id="reject", name="Reject", kind="reject_once"),
]
ids = Ids()


@dataclass
class Session:
    session_id: str
    cwd: str
    history: list[Any] = field(default_factory=list)  # v1 update models, for session/load
    turn: asyncio.Task[str] | None = None


class TestAgent:
    """The SDK's ``Agent`` handlers: sessions in memory, one scenario per prompt."""

    def __init__(self) -> None:
        self.conn: Any = None
        self.sessions: dict[str, Session] = {}

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(self, protocol_version: int, **_: Any) -> schema.InitializeResponse:
        return schema.InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_info=schema.Implementation(name="acp2-interop-py-v1-agent", version="0.12.1"),
            agent_capabilities=schema.AgentCapabilities(load_session=True),
        )

    async def new_session(self, cwd: str, **_: Any) -> schema.NewSessionResponse:
        session = Session(ids.next("sess"), cwd)
        self.sessions[session.session_id] = session
        return schema.NewSessionResponse(session_id=session.session_id)

    async def load_session(self, cwd: str, session_id: str, **_: Any) -> schema.LoadSessionResponse:
        session = self.session(session_id)
        for update in session.history:
            await self.conn.session_update(session_id=session_id, update=update)
        return schema.LoadSessionResponse()

    async def prompt(self, session_id: str, prompt: list[Any], **_: Any) -> schema.PromptResponse:
        session = self.session(session_id)
        if session.turn is not None:
            raise RequestError.invalid_request({"details": "a prompt is already running"})
        blocks = [b.model_dump(mode="json", by_alias=True, exclude_none=True) for b in prompt]
        for block in prompt:
            session.history.append(helpers.update_user_message(block))
        session.turn = asyncio.create_task(self.run(session, prompt_text(blocks)))
        try:
            await asyncio.wait({session.turn})
        finally:
            turn, session.turn = session.turn, None
        if turn.cancelled():
            return schema.PromptResponse(stop_reason="cancelled")
        return schema.PromptResponse(stop_reason=turn.result())  # raises the turn's error

    async def cancel(self, session_id: str, **_: Any) -> None:
        session = self.sessions.get(session_id)
        if session is not None and session.turn is not None:
            session.turn.cancel()

    def session(self, session_id: str) -> Session:
        found = self.sessions.get(session_id)
        if found is None:
            raise RequestError.resource_not_found(session_id)
        return found

    async def send(self, session: Session, update: Any) -> None:
        session.history.append(update)
        await self.conn.session_update(session_id=session.session_id, update=update)

    async def say(self, session: Session, value: str) -> None:
        await self.send(session, helpers.update_agent_message_text(value))

    async def run(self, session: Session, text: str) -> str:
        word, rest = split_scenario(text)
        if word == "echo":
            await self.say(session, rest)
        elif word == "stream":
            for i in range(int(rest) if rest.isdigit() else 0):
                await self.say(session, f"{i},")
        elif word == "tools":
            return await self.tools(session)
        elif word == "wait":
            await self.say(session, "waiting")
            await asyncio.Event().wait()  # until session/cancel cancels this task
        elif word == "kinds":
            await self.kinds(session)
        elif word == "fail":
            await self.say(session, "failing on purpose")
            raise RequestError.internal_error({"details": "scenario 'fail' failed"})
        else:
            await self.say(session, text)
        return "end_turn"

    async def tools(self, session: Session) -> str:
        call_id = ids.next("call")
        await self.send(
            session,
            helpers.start_tool_call(call_id, "Edit hello.txt", kind="edit", status="pending"),
        )
        tool_call = schema.ToolCallUpdate(
            tool_call_id=call_id, title="Edit hello.txt", kind="edit", status="pending"
        )
        try:
            response = await self.conn.request_permission(
                session_id=session.session_id, tool_call=tool_call, options=OPTIONS
            )
        except asyncio.CancelledError:
            await self.send(session, helpers.update_tool_call(call_id, status="failed"))
            raise
        outcome = response.outcome
        if outcome.outcome == "cancelled":
            await self.send(session, helpers.update_tool_call(call_id, status="failed"))
            return "cancelled"
        if outcome.option_id == "allow":
            await self.run_tool(session, call_id)
            await self.say(session, "edited hello.txt")
        else:
            rejected = [helpers.tool_content(helpers.text_block("permission rejected"))]
            failed = helpers.update_tool_call(call_id, status="failed", content=rejected)
            await self.send(session, failed)
        return "end_turn"

    async def run_tool(self, session: Session, call_id: str) -> None:
        path = os.path.join(session.cwd, "hello.txt")
        await self.send(session, helpers.update_tool_call(call_id, status="in_progress"))
        diff = helpers.tool_diff_content(path, "hello, world\n", "hello\n")
        await self.send(session, helpers.update_tool_call(call_id, content=[diff]))
        done = helpers.update_tool_call(call_id, status="completed", raw_output={"exitCode": 0})
        await self.send(session, done)

    async def kinds(self, session: Session) -> None:
        await self.send(session, helpers.update_agent_thought_text("thinking"))
        entries = [
            helpers.plan_entry("look", priority="high", status="completed"),
            helpers.plan_entry("answer", status="in_progress"),
        ]
        await self.send(session, helpers.update_plan(entries))
        command = schema.AvailableCommand(name="help", description="Show help")
        await self.send(session, helpers.update_available_commands([command]))

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        log(NAME, "extension notification", method)


if __name__ == "__main__":
    asyncio.run(run_agent(TestAgent()))

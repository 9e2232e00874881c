"""The scenarios of ``v2_agent.py`` (see its docstring and ``../README.md``): each
takes the agent, the session and the rest of the prompt, sends the scenario's updates
through the agent, and returns the idle's stop reason fields."""

from __future__ import annotations

import asyncio
import os
from typing import TYPE_CHECKING, Any

from acp.experimental.v2 import schema
from peer_common import HELLO_OUTPUT, HELLO_PATCH, Ids, b64, text

if TYPE_CHECKING:
    from v2_agent import Session, TestAgent

PERMISSION_OPTIONS = [
    {"optionId": "allow", "name": "Allow once", "kind": "allow_once"},
    {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
]
ids = Ids()  # shared with the agent: one sequence of ids per process


async def say(agent: TestAgent, session: Session, value: str, **extra: Any) -> None:
    message = {"sessionUpdate": "agent_message_chunk", "messageId": ids.next("msg_agent")}
    await agent.notify(session, {**message, "content": text(value), **extra})


async def scenario_echo(agent: TestAgent, session: Session, rest: str) -> dict[str, Any]:
    await say(agent, session, rest)
    return {"stopReason": "end_turn"}


async def scenario_stream(agent: TestAgent, session: Session, rest: str) -> dict[str, Any]:
    count = int(rest) if rest.isdigit() else 0
    message_id = ids.next("msg_agent")
    for i in range(count):
        update = {"sessionUpdate": "agent_message_chunk", "messageId": message_id}
        await agent.notify(session, {**update, "content": text(f"{i},")})
    return {"stopReason": "end_turn"}


async def ask_permission(agent: TestAgent, session: Session, tool_call: dict[str, Any]) -> Any:
    """The client's outcome. If the turn is cancelled while waiting, the SDK withdraws
    the request with ``$/cancel_request`` (Nov D-15) and this raises ``CancelledError``."""
    await agent.notify(session, {"sessionUpdate": "state_update", "state": "requires_action"})
    assert agent.conn is not None
    response = await agent.conn.request_permission(
        session_id=session.session_id,
        title=f"Allow {tool_call['title']}?",
        subject=schema.ToolCallPermissionSubjectVariant.model_validate(
            {"type": "tool_call", "toolCall": tool_call}
        ),
        options=[schema.PermissionOption.model_validate(o) for o in PERMISSION_OPTIONS],
    )
    return response.outcome


def allowed(outcome: Any) -> bool:
    if outcome.outcome != "selected":
        return False
    kinds = {o["optionId"]: o["kind"] for o in PERMISSION_OPTIONS}
    return kinds.get(outcome.option_id, "").startswith("allow")


async def run_tool(agent: TestAgent, session: Session, call_id: str) -> None:
    terminal_id = ids.next("term")
    path = os.path.join(session.cwd, "hello.txt")

    async def send(kind: str, **fields: Any) -> None:
        await agent.notify(session, {"sessionUpdate": kind, **fields})

    await send("tool_call_update", toolCallId=call_id, status="in_progress")
    diff = {"type": "diff", "changes": [{"operation": "modify", "path": path}]}
    patch = {"format": "git_patch", "text": HELLO_PATCH}
    await send("tool_call_content_chunk", toolCallId=call_id, content={**diff, "patch": patch})
    terminal = {"type": "terminal", "terminalId": terminal_id}
    await send("tool_call_content_chunk", toolCallId=call_id, content=terminal)
    await send("terminal_update", terminalId=terminal_id, command="cat hello.txt", cwd=session.cwd)
    await send("terminal_output_chunk", terminalId=terminal_id, data=b64(HELLO_OUTPUT))
    await send("terminal_update", terminalId=terminal_id, exitStatus={"exitCode": 0})
    await send(
        "tool_call_update", toolCallId=call_id, status="completed", rawOutput={"exitCode": 0}
    )


async def scenario_tools(agent: TestAgent, session: Session, _rest: str) -> dict[str, Any]:
    call_id = ids.next("call")
    tool_call = {"toolCallId": call_id, "title": "Edit hello.txt", "kind": "edit"}
    tool_call["status"] = "pending"
    cancelled = {"sessionUpdate": "tool_call_update", "toolCallId": call_id, "status": "cancelled"}
    await agent.notify(
        session, {"sessionUpdate": "tool_call_update", **tool_call, "name": "edit_file"}
    )
    try:
        outcome = await ask_permission(agent, session, tool_call)
    except asyncio.CancelledError:
        await agent.notify(session, cancelled)
        raise
    if outcome.outcome == "cancelled":  # dismissed, or answered so because of a cancel
        await agent.notify(session, cancelled)
        return {"stopReason": "cancelled"}
    await agent.notify(session, {"sessionUpdate": "state_update", "state": "running"})
    if allowed(outcome):
        await run_tool(agent, session, call_id)
        await say(agent, session, "edited hello.txt")
    else:
        content = [{"type": "content", "content": text("permission rejected")}]
        failed = {"toolCallId": call_id, "status": "failed", "content": content}
        await agent.notify(session, {"sessionUpdate": "tool_call_update", **failed})
    return {"stopReason": "end_turn"}


async def scenario_wait(agent: TestAgent, session: Session, _rest: str) -> dict[str, Any]:
    await say(agent, session, "waiting")
    await asyncio.Event().wait()  # until session/cancel or session/close cancels the turn
    return {"stopReason": "end_turn"}  # not reached


async def scenario_ext(agent: TestAgent, session: Session, _rest: str) -> dict[str, Any]:
    await agent.notify(session, {"sessionUpdate": "_acp2/custom", "payload": {"answer": 42}})
    message = {"sessionUpdate": "agent_message", "messageId": ids.next("msg_agent")}
    meta = {"acp2/test": {"tag": "meta-on-update"}}
    await agent.notify(session, {**message, "content": [text("ext")], "_meta": meta})
    assert agent.conn is not None
    hello = {"sessionId": session.session_id, "from": "py-v2-agent"}
    await agent.conn.send_extension_notification("_acp2/hello", hello)
    return {"stopReason": "end_turn"}


async def scenario_kinds(agent: TestAgent, session: Session, _rest: str) -> dict[str, Any]:
    entries = [
        {"content": "look", "priority": "high", "status": "completed"},
        {"content": "answer", "priority": "medium", "status": "in_progress"},
    ]
    commands = [{"type": "command", "name": "help", "description": "Show help"}]
    compaction = ids.next("compaction")
    for update in (
        {"sessionUpdate": "agent_thought_chunk", "messageId": ids.next("msg_thought")}
        | {"content": text("thinking")},
        {"sessionUpdate": "plan_update", "plan": {"type": "items", "planId": "plan_1"}},
        {"sessionUpdate": "usage_update", "used": 1200, "size": 200000}
        | {"cost": {"amount": 0.01, "currency": "USD"}},
        {"sessionUpdate": "available_commands_update", "availableCommands": commands},
        {"sessionUpdate": "notice", "severity": "info", "title": "A notice"},
        {"sessionUpdate": "compaction_update", "compactionId": compaction, "status": "in_progress"},
        {"sessionUpdate": "compaction_summary_chunk", "compactionId": compaction}
        | {"content": text("summary")},
        {"sessionUpdate": "compaction_update", "compactionId": compaction, "status": "completed"},
    ):
        if update["sessionUpdate"] == "plan_update":
            update["plan"]["entries"] = entries
        await agent.notify(session, update)
    return {"stopReason": "end_turn"}


async def scenario_fail(agent: TestAgent, session: Session, _rest: str) -> dict[str, Any]:
    await say(agent, session, "failing on purpose")
    return {"stopReason": "error"}  # alpha.5's idle carries no error object


SCENARIOS = {
    "echo": scenario_echo,
    "stream": scenario_stream,
    "tools": scenario_tools,
    "wait": scenario_wait,
    "ext": scenario_ext,
    "kinds": scenario_kinds,
    "fail": scenario_fail,
}

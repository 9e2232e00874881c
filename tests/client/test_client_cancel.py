"""Cancelling work from the client (PL-14..PL-21, PR-09)."""

from __future__ import annotations

import anyio
import pytest
from client_helpers import fake_agent, handshake, in_process, initialize_result

from acp2.client import PermissionRequest
from acp2.schema import AgentMessageChunk, StateUpdate
from helpers.timeouts import TIMEOUT

pytestmark = pytest.mark.anyio


async def test_cancel_mid_turn_waits_for_the_agents_idle_cancelled() -> None:
    """PL-14, PL-18: cancel() returns after idle/cancelled; the work reports cancelled."""
    with anyio.fail_after(TIMEOUT):
        async with in_process() as client:
            session = await client.new_session()
            work = await session.prompt("wait")
            async for update in work:
                if isinstance(update, AgentMessageChunk):
                    break
            await session.cancel()
            assert work.done
            assert work.stop_reason == "cancelled"
            assert session.state.foreground == "idle"
            last = work.updates[-1]
            assert isinstance(last, StateUpdate)
            assert last.stop_reason == "cancelled"


async def test_cancel_during_a_permission_wait_answers_it_cancelled_and_marks_tools() -> None:
    """PL-15, PL-16, PR-09: the pending permission is answered cancelled at once, the
    unfinished tool call is marked cancelled locally, and the work ends cancelled."""
    asked = anyio.Event()
    statuses: list[str] = []

    async def never_answers(request: PermissionRequest) -> str:
        asked.set()
        await anyio.sleep_forever()
        return "allow_once"  # pragma: no cover

    with anyio.fail_after(TIMEOUT):
        async with in_process(permissions=never_answers) as client:
            session = await client.new_session()
            work = await session.prompt("tools")
            await asked.wait()
            (call,) = session.state.tool_calls.values()
            assert call.status == "pending"
            session.add_listener(lambda update, raw: statuses.append(call.status))
            stop = await work.cancel()
            assert stop == "cancelled"
            assert statuses
            assert statuses[0] == "cancelled"
            assert call.status == "cancelled"
            assert not session._permissions


async def test_work_cancel_returns_the_stop_reason_when_the_work_already_ended() -> None:
    """PL-18 (Nov): nothing extra when already idle; cancel returns at once."""
    with anyio.fail_after(TIMEOUT):
        async with in_process() as client:
            session = await client.new_session()
            work = await session.prompt("echo done")
            await work.wait()
            assert await work.cancel() == "end_turn"


async def test_tool_updates_after_cancel_are_still_applied() -> None:
    """PL-20, PL-21: updates between session/cancel and idle are accepted and reduced."""

    async def script(fake, msg):  # type: ignore[no-untyped-def]
        if await handshake(fake, msg):
            return
        method = msg.get("method")
        if method == "session/prompt":
            await fake.respond(msg, {"messageId": "u1"})
            await fake.update("s1", {"sessionUpdate": "state_update", "state": "running"})
            await fake.update(
                "s1",
                {"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "in_progress"},
            )
        elif method == "session/cancel":
            await fake.update(
                "s1",
                {
                    "sessionUpdate": "tool_call_update",
                    "toolCallId": "t1",
                    "status": "failed",
                    "rawOutput": {"why": "cancelled"},
                },
            )
            await fake.update(
                "s1", {"sessionUpdate": "state_update", "state": "idle", "stopReason": "cancelled"}
            )

    with anyio.fail_after(TIMEOUT):
        async with fake_agent(script) as (client, fake):
            session = await client.new_session()
            work = await session.prompt("go")
            await fake.wait_for(lambda: "t1" in session.state.tool_calls)
            await session.cancel()
            assert work.stop_reason == "cancelled"
            call = session.state.tool_calls["t1"]
            assert call.status == "failed"
            assert call.raw_output == {"why": "cancelled"}


async def test_cancel_leaves_permission_requests_of_listed_background_work_open() -> None:
    """D-15: on cancel, requests about tool calls listed in `background` stay pending;
    the foreground one is answered cancelled at once."""
    never = anyio.Event()

    async def waits(request: PermissionRequest) -> str:
        await never.wait()
        return "ok"  # pragma: no cover

    def ask(call_id: str) -> dict[str, object]:
        return {
            "sessionId": "s1",
            "title": f"Run {call_id}?",
            "subject": {"type": "tool_call", "toolCall": {"toolCallId": call_id}},
            "options": [{"optionId": "ok", "name": "OK", "kind": "allow_once"}],
        }

    async def script(fake, msg):  # type: ignore[no-untyped-def]
        method = msg.get("method")
        if method == "initialize":
            await fake.respond(msg, initialize_result())
        elif method == "session/new":
            await fake.respond(msg, {"sessionId": "s1"})
            background = [{"type": "tool_call", "toolCallId": "bg"}]
            await fake.update(
                "s1",
                {"sessionUpdate": "state_update", "state": "running", "background": background},
            )
        elif method == "session/cancel":
            await fake.update(
                "s1",
                {
                    "sessionUpdate": "state_update",
                    "state": "idle",
                    "stopReason": "cancelled",
                    "background": [{"type": "tool_call", "toolCallId": "bg"}],
                },
            )

    with anyio.fail_after(TIMEOUT):
        async with fake_agent(script, permissions=waits) as (client, fake):
            session = await client.new_session()
            bg = await fake.request("session/request_permission", ask("bg"))
            fg = await fake.request("session/request_permission", ask("fg"))
            while len(session._permissions) < 2:
                await session._wait_change()
            await session.cancel()
            (answer,) = await fake.wait_for(lambda: fake.answers_to(fg))
            assert answer["result"] == {"outcome": {"outcome": "cancelled"}}
            assert fake.answers_to(bg) == []
            assert len(session._permissions) == 1

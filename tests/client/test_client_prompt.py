"""Prompting through the client runtime against the in-process test agent (PL-*, MU-*)."""

from __future__ import annotations

import anyio
import pytest
from client_helpers import CWD, fake_agent, handshake, in_process, initialize_result
from msgspec import Raw

from acp2.schema import (
    AgentMessageChunk,
    SessionInfoUpdate,
    StateUpdate,
    UserMessage,
    UserMessageChunk,
)
from acp2.schema.codec import decode_any
from helpers.timeouts import TIMEOUT

pytestmark = pytest.mark.anyio


async def test_echo_prompt_is_accepted_with_a_message_id_and_iterates_until_idle() -> None:
    """PL-03, PL-04, PL-05: prompt returns on acceptance; the work's updates end at idle."""
    with anyio.fail_after(TIMEOUT):
        async with in_process() as client:
            session = await client.new_session()
            work = await session.prompt("echo hello world")
            assert work.accepted
            kinds = [type(update).__name__ async for update in work]
            assert kinds[-1] == "StateUpdate"
            assert "AgentMessageChunk" in kinds
            assert await work.wait() == "end_turn"
            assert work.text == "hello world"
            assert work.message_id is not None
            assert ("user", work.message_id) in session.state.messages
            assert session.state.foreground == "idle"
            assert session.state.agent_text() == "hello world"


async def test_a_work_can_be_iterated_again_from_the_start_after_it_ended() -> None:
    """The work keeps its updates: a second iteration yields the same sequence."""
    with anyio.fail_after(TIMEOUT):
        async with in_process() as client:
            session = await client.new_session()
            work = await session.prompt("echo a b")
            first = [u async for u in work]
            second = [u async for u in work]
            assert first == second
            assert isinstance(first[-1], StateUpdate)
            assert first[-1].state == "idle"


async def test_stop_reasons_other_than_end_turn_are_reported_verbatim() -> None:
    """PL-10: a custom `_`-prefixed stop reason and max_tokens come through unchanged."""
    with anyio.fail_after(TIMEOUT):
        async with in_process() as client:
            session = await client.new_session()
            assert await (await session.prompt("stop max_tokens")).wait() == "max_tokens"
            assert await (await session.prompt("stop _quota")).wait() == "_quota"
            assert session.state.stop_reason == "_quota"


async def test_a_failing_agent_handler_ends_the_work_with_error_and_an_error_object() -> None:
    """PL-10, D-12: idle with stopReason error carries the error object."""
    with anyio.fail_after(TIMEOUT):
        async with in_process() as client:
            session = await client.new_session()
            work = await session.prompt("fail boom")
            assert await work.wait() == "error"
            assert work.error is not None
            assert "boom" in work.error.message


async def test_an_unknown_underscore_update_passes_through_raw_and_byte_exact() -> None:
    """EX-07: `_acp2/custom` arrives as msgspec.Raw, kept in state.unknown; _meta kept."""
    seen: list[bytes] = []
    with anyio.fail_after(TIMEOUT):
        async with in_process() as client:
            session = await client.new_session(on_update=lambda update, raw: seen.append(raw))
            work = await session.prompt("ext")
            updates = [u async for u in work]
            raws = [u for u in updates if isinstance(u, Raw)]
            assert len(raws) == 1
            assert decode_any(raws[0]) == {
                "sessionUpdate": "_acp2/custom",
                "payload": {"n": 1, "text": "custom"},
            }
            assert session.state.unknown == raws
            assert bytes(raws[0]) in seen
            info = next(u for u in updates if isinstance(u, SessionInfoUpdate))
            assert info.meta == {"acp2.test": {"keep": True}}
            assert session.state.meta == {"acp2.test": {"keep": True}}


async def test_every_update_kind_of_the_all_scenario_reduces_without_error() -> None:
    """Section 3: all update kinds reach the state (plan, tool call, terminal, usage...)."""
    with anyio.fail_after(TIMEOUT):
        async with in_process(permissions=lambda request: request.options[0]) as client:
            session = await client.new_session()
            work = await session.prompt("all")
            assert await work.wait() == "end_turn"
            state = session.state
            assert state.plans
            assert state.tool_calls
            assert state.terminals
            assert state.usage is not None
            assert state.usage.used == 1200
            assert state.title == "ext scenario"


async def test_updates_that_arrive_while_idle_are_reduced_and_delivered() -> None:
    """PL-12: a background update after idle reaches the state and the listeners."""

    async def script(fake, msg):  # type: ignore[no-untyped-def]
        if msg.get("method") == "initialize":
            await fake.respond(msg, initialize_result())
        elif msg.get("method") == "session/new":
            await fake.respond(msg, {"sessionId": "s1"})
        elif msg.get("method") == "_poke":
            await fake.update("s1", {"sessionUpdate": "tool_call_update", "toolCallId": "bg"})
            await fake.respond(msg, {})

    received: list[object] = []
    with anyio.fail_after(TIMEOUT):
        async with fake_agent(script) as (client, _fake):
            session = await client.new_session(on_update=lambda u, raw: received.append(u))
            await client.ext_request("_poke", {})
            assert "bg" in session.state.tool_calls
            assert session.state.foreground == "idle"
            assert len(received) == 1


async def test_a_prompt_response_without_message_id_takes_the_id_from_the_user_message() -> None:
    """D-09 (accept): an Aug agent answers `{}`; the work's id comes from user_message."""

    async def script(fake, msg):  # type: ignore[no-untyped-def]
        if await handshake(fake, msg):
            return
        if msg.get("method") == "session/prompt":
            await fake.respond(msg, {})
            text = {"type": "text", "text": "hi"}
            await fake.update(
                "s1", {"sessionUpdate": "user_message", "messageId": "u1", "content": [text]}
            )
            await fake.update("s1", {"sessionUpdate": "state_update", "state": "running"})
            await fake.update(
                "s1", {"sessionUpdate": "agent_message_chunk", "messageId": "a1", "content": text}
            )
            await fake.update(
                "s1", {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}
            )

    with anyio.fail_after(TIMEOUT):
        async with fake_agent(script) as (client, _fake):
            session = await client.new_session()
            work = await session.prompt("hi")
            assert await work.wait() == "end_turn"
            assert work.message_id == "u1"
            assert work.text == "hi"


async def test_updates_of_earlier_work_before_acceptance_do_not_end_the_new_work() -> None:
    """PL-22, D-09: the previous work's idle and a user message sent before the response
    (Nov) are sorted out on acceptance; the work ends with its own idle."""

    async def script(fake, msg):  # type: ignore[no-untyped-def]
        if await handshake(fake, msg):
            return
        if msg.get("method") == "session/prompt":
            text = {"type": "text", "text": "x"}
            await fake.update(
                "s1", {"sessionUpdate": "agent_message_chunk", "messageId": "old", "content": text}
            )
            await fake.update(
                "s1", {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}
            )
            await fake.update(
                "s1", {"sessionUpdate": "user_message", "messageId": "u2", "content": [text]}
            )
            await fake.update("s1", {"sessionUpdate": "state_update", "state": "running"})
            await fake.respond(msg, {"messageId": "u2"})
            await fake.update(
                "s1", {"sessionUpdate": "agent_message_chunk", "messageId": "new", "content": text}
            )
            await fake.update(
                "s1", {"sessionUpdate": "state_update", "state": "idle", "stopReason": "refusal"}
            )

    with anyio.fail_after(TIMEOUT):
        async with fake_agent(script) as (client, _fake):
            session = await client.new_session()
            work = await session.prompt("x")
            assert await work.wait() == "refusal"
            updates = work.updates
            assert isinstance(updates[0], UserMessage)
            assert [u.message_id for u in updates if isinstance(u, AgentMessageChunk)] == ["new"]
            assert work.message_id == "u2"


async def test_a_work_whose_idle_came_before_the_response_is_already_done() -> None:
    """D-09: the user message and the whole work may precede the response."""

    async def script(fake, msg):  # type: ignore[no-untyped-def]
        if await handshake(fake, msg):
            return
        if msg.get("method") == "session/prompt":
            text = {"type": "text", "text": "x"}
            await fake.update(
                "s1", {"sessionUpdate": "user_message_chunk", "messageId": "u9", "content": text}
            )
            await fake.update("s1", {"sessionUpdate": "state_update", "state": "running"})
            await fake.update(
                "s1", {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}
            )
            await fake.respond(msg, {"messageId": "u9"})

    with anyio.fail_after(TIMEOUT):
        async with fake_agent(script) as (client, _fake):
            session = await client.new_session()
            work = await session.prompt("x")
            assert work.done
            assert isinstance(work.updates[0], UserMessageChunk)
            assert await work.wait() == "end_turn"


async def test_a_refused_prompt_raises_the_agents_error_and_leaves_no_active_work() -> None:
    """PL-23, D-11: an error answer means not inserted; it is raised to the caller."""
    from acp2.errors import RequestCancelled

    async def script(fake, msg):  # type: ignore[no-untyped-def]
        if await handshake(fake, msg):
            return
        if msg.get("method") == "session/prompt":
            await fake.error(msg, -32800, "withdrawn")

    with anyio.fail_after(TIMEOUT):
        async with fake_agent(script) as (client, _fake):
            session = await client.new_session(CWD)
            with pytest.raises(RequestCancelled):
                await session.prompt("x")
            await session.cancel()  # nothing accepted: returns at once

"""Session management through the client (SS-*): new, list, resume, close, delete."""

from __future__ import annotations

import anyio
import pytest
from client_helpers import CWD, fake_agent, in_process, initialize_result

from acp2.errors import LocalProtocolError, ResourceNotFound
from acp2.schema import AvailableCommandsUpdate, UserMessage, UserMessageChunk
from helpers.timeouts import TIMEOUT

pytestmark = pytest.mark.anyio


async def test_new_sessions_get_distinct_ids_and_show_in_the_list() -> None:
    """SS-03, SS-18: two new sessions, both listed with their cwd."""
    with anyio.fail_after(TIMEOUT):
        async with in_process() as client:
            one = await client.new_session()
            two = await client.new_session()
            assert one.id != two.id
            listed = {info.session_id: info.cwd for info in await client.list_sessions()}
            assert listed[one.id] == CWD
            assert listed[two.id] == CWD
            assert client.sessions == {one.id: one, two.id: two}


async def test_the_commands_announced_at_session_start_are_in_the_state() -> None:
    """D-19, CM-*: the initial available commands reach the session state."""
    with anyio.fail_after(TIMEOUT):
        async with in_process() as client:
            session = await client.new_session()
            assert [c.name for c in session.state.available_commands] == ["echo"]


async def test_resume_with_replay_rebuilds_the_conversation_before_returning() -> None:
    """SS-12, SS-14: replayed history is reduced into the fresh state before resume returns."""
    with anyio.fail_after(TIMEOUT):
        async with in_process() as client:
            session = await client.new_session()
            await (await session.prompt("echo first")).wait()
            await (await session.prompt("echo second")).wait()
            resumed = await client.resume(session.id, replay=True)
            assert resumed is not session
            texts = [m.text for m in resumed.state.timeline if hasattr(m, "kind")]
            assert texts == ["echo first", "first", "echo second", "second"]
            assert resumed.state.foreground == "idle"
            work = await resumed.prompt("echo third")
            assert await work.wait() == "end_turn"
            assert work.text == "third"


async def test_resume_without_replay_sends_no_history() -> None:
    """SS-11: no message updates without replayFrom."""
    with anyio.fail_after(TIMEOUT):
        async with in_process() as client:
            session = await client.new_session()
            await (await session.prompt("echo one")).wait()
            resumed = await client.resume(session.id)
            assert resumed.state.messages == {}


async def test_resume_of_an_unknown_session_raises_and_keeps_the_old_object() -> None:
    """SS-26: -32002 is raised; the previous session object is still attached."""
    with anyio.fail_after(TIMEOUT):
        async with in_process() as client:
            session = await client.new_session()
            with pytest.raises(ResourceNotFound):
                await client.resume("sess_missing")
            assert client.sessions == {session.id: session}


async def test_close_detaches_the_session_and_later_prompts_are_refused() -> None:
    """SS-22: close succeeds; the closed session refuses further use locally."""
    with anyio.fail_after(TIMEOUT):
        async with in_process() as client:
            session = await client.new_session()
            await session.close()
            await session.close()  # idempotent
            assert session.closed
            assert session.id not in client.sessions
            with pytest.raises(LocalProtocolError):
                await session.prompt("echo late")


async def test_close_during_a_turn_ends_the_work_cancelled() -> None:
    """SS-22, D-16: the agent cancels the work (idle/cancelled) before answering close."""
    with anyio.fail_after(TIMEOUT):
        async with in_process() as client:
            session = await client.new_session()
            work = await session.prompt("wait")
            await session.close()
            assert work.done
            assert work.stop_reason == "cancelled"


async def test_delete_removes_the_session_from_the_list_and_is_idempotent() -> None:
    """SS-23: delete, then delete again; both succeed and the session is gone."""
    with anyio.fail_after(TIMEOUT):
        async with in_process() as client:
            session = await client.new_session()
            await session.close()
            await client.delete(session.id)
            await client.delete(session.id)
            assert session.id not in {i.session_id for i in await client.list_sessions()}


def _manager(early_commands: bool = False, not_found: bool = False, pages: int = 0):  # type: ignore[no-untyped-def]
    async def script(fake, msg):  # type: ignore[no-untyped-def]
        method = msg.get("method")
        if method == "initialize":
            await fake.respond(msg, initialize_result(delete={}))
        elif method == "session/new":
            if early_commands:
                await fake.update(
                    "s1",
                    {
                        "sessionUpdate": "available_commands_update",
                        "availableCommands": [{"name": "early", "description": "d"}],
                    },
                )
            await fake.respond(
                msg,
                {
                    "sessionId": "s1",
                    "availableCommands": [{"type": "command", "name": "late", "description": "d"}],
                },
            )
        elif method in ("session/close", "session/delete") and not_found:
            await fake.error(msg, -32002, "Unknown session", {"sessionId": "s1"})
        elif method == "session/list":
            cursor = msg["params"].get("cursor")
            index = 0 if cursor is None else int(cursor or "0") + 1
            page = {"sessions": [{"sessionId": f"s{index}", "cwd": CWD}]}
            if index < pages:
                page["nextCursor"] = "" if index == 0 else str(index)
            await fake.respond(msg, page)

    return script


async def test_updates_sent_before_the_new_session_response_are_buffered() -> None:
    """SS-25: an available_commands_update before the session/new result is kept, and
    the response's list does not overwrite it."""
    with anyio.fail_after(TIMEOUT):
        async with fake_agent(_manager(early_commands=True)) as (client, _fake):
            seen: list[object] = []
            session = await client.new_session(on_update=lambda u, raw: seen.append(u))
            assert [c.name for c in session.state.available_commands] == ["early"]
            assert isinstance(seen[0], AvailableCommandsUpdate)


async def test_the_new_session_response_seeds_commands_when_no_update_came() -> None:
    """D-19: the response's availableCommands seed the state."""
    with anyio.fail_after(TIMEOUT):
        async with fake_agent(_manager()) as (client, _fake):
            session = await client.new_session()
            assert [c.name for c in session.state.available_commands] == ["late"]


async def test_resource_not_found_from_close_or_delete_counts_as_success() -> None:
    """D-16, section 4.8 accept 9: -32002 from close and delete is success."""
    with anyio.fail_after(TIMEOUT):
        async with fake_agent(_manager(not_found=True)) as (client, _fake):
            session = await client.new_session()
            await session.close()
            await client.delete("s1")
            assert session.closed


async def test_list_follows_every_cursor_including_the_empty_string() -> None:
    """SS-19, D-20: "" is a valid cursor; only an absent cursor ends pagination."""
    with anyio.fail_after(TIMEOUT):
        async with fake_agent(_manager(pages=3)) as (client, fake):
            listed = await client.list_sessions(cwd=CWD)
            assert [i.session_id for i in listed] == ["s0", "s1", "s2", "s3"]
            cursors = [
                m["params"].get("cursor")
                for m in fake.received
                if m.get("method") == "session/list"
            ]
            assert cursors == [None, "", "1", "2"]
            assert all(
                m["params"]["cwd"] == CWD
                for m in fake.received
                if m.get("method") == "session/list"
            )


async def test_replayed_user_messages_are_not_mistaken_for_a_new_prompt() -> None:
    """SS-12: replay goes to the resumed state only; no work is involved."""
    with anyio.fail_after(TIMEOUT):
        async with in_process() as client:
            session = await client.new_session()
            await (await session.prompt("echo x")).wait()
            kinds: list[type] = []
            await client.resume(
                session.id, replay=True, on_update=lambda u, r: kinds.append(type(u))
            )
            assert UserMessage in kinds or UserMessageChunk in kinds

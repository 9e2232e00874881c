"""Child sessions (Preview subagents, "subagent_update"): announced on the parent,
then the child's own messages routed to a session of its own; no client mutation of a
child unless its capabilities allow it; a parent tool call's ``session`` content names
the child it delegated to.

Every frame the fake agent sends here is first validated under Aug, Nov and the Preview
(:func:`send`): the Preview is the newest schema with ``subagent_update``, Aug and Nov
see it (and ``session`` content, in no schema) as their unions' ``other`` fallbacks."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from client_helpers import fake_agent, handshake

from acp2.client import PermissionRequest
from acp2.client.children import MAX_CHILDREN, SubagentSession
from acp2.errors import LocalProtocolError
from acp2.schema import SessionReference
from helpers.timeouts import TIMEOUT
from schema_validation import validate_frame

pytestmark = pytest.mark.anyio


def chunk(text: str) -> dict[str, Any]:
    return {
        "sessionUpdate": "agent_message_chunk",
        "messageId": "m1",
        "content": {"type": "text", "text": text},
    }


def valid(frame: dict[str, Any]) -> dict[str, Any]:
    """``frame``, after checking it is valid under every draft."""
    for draft in ("aug", "nov", "preview"):
        assert validate_frame(frame, "agent", draft, request_methods={}) == [], draft
    return frame


async def send(fake: Any, session_id: str, update: dict[str, Any]) -> None:
    """``fake.update(session_id, update)``, the frame validated first."""
    params = {"sessionId": session_id, "update": update}
    await fake.send(valid({"jsonrpc": "2.0", "method": "session/update", "params": params}))


async def until(session: Any, predicate: Any) -> None:
    while not predicate():
        await session._wait_change()


async def script(fake: Any, msg: dict[str, Any]) -> None:
    await handshake(fake, msg)


async def test_a_child_announced_by_subagent_update_gets_its_own_session_and_updates() -> None:
    with anyio.fail_after(TIMEOUT):
        async with fake_agent(script) as (client, fake):
            parent = await client.new_session()
            announce = {
                "sessionUpdate": "subagent_update",
                "sessionId": "c1",
                "title": "Researcher",
            }
            await send(fake, "s1", announce)
            await send(fake, "c1", chunk("found it"))
            await send(
                fake,
                "c1",
                {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"},
            )
            await until(parent, lambda: "c1" in parent.children)
            child = parent.children["c1"]
            assert isinstance(child, SubagentSession)
            assert child.parent is parent
            assert child.entry.title == "Researcher"
            await until(child, lambda: child.state.foreground == "idle")
            assert [m.text for m in child.state.messages.values()] == ["found it"]
            assert not parent.state.messages  # the child's text is not the parent's


async def test_a_childs_permission_request_is_asked_about_the_child() -> None:
    asked: list[PermissionRequest] = []

    def policy(request: PermissionRequest) -> Any:
        asked.append(request)
        return request.options[0]

    params = {
        "sessionId": "c1",
        "title": "Run it?",
        "options": [{"optionId": "ok", "name": "OK", "kind": "allow_once"}],
    }
    with anyio.fail_after(TIMEOUT):
        async with fake_agent(script, permissions=policy) as (client, fake):
            parent = await client.new_session()
            await send(fake, "s1", {"sessionUpdate": "subagent_update", "sessionId": "c1"})
            valid(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "session/request_permission",
                    "params": params,
                }
            )
            rid = await fake.request("session/request_permission", params)
            (answer,) = await fake.wait_for(lambda: fake.answers_to(rid))
            assert answer["result"]["outcome"]["optionId"] == "ok"
            assert asked[0].session is parent.children["c1"]


async def test_a_child_takes_no_prompt_close_or_option_and_cancel_only_when_allowed() -> None:
    with anyio.fail_after(TIMEOUT):
        async with fake_agent(script) as (client, fake):
            parent = await client.new_session()
            await send(fake, "s1", {"sessionUpdate": "subagent_update", "sessionId": "c1"})
            await until(parent, lambda: "c1" in parent.children)
            child = parent.children["c1"]
            for call in (child.prompt("hi"), child.close(), child.set_config_option("m", "x")):
                with pytest.raises(LocalProtocolError):
                    await call
            with pytest.raises(LocalProtocolError, match="cancel"):
                await child.cancel(wait=False)
            allowed = {
                "sessionUpdate": "subagent_update",
                "sessionId": "c1",
                "capabilities": {"cancel": {}},
            }
            await send(fake, "s1", allowed)
            await until(parent, lambda: child.may_cancel)
            await child.cancel(wait=False)
            sent = await fake.wait_for(
                lambda: [m for m in fake.received if m.get("method") == "session/cancel"]
            )
            assert sent[0]["params"] == {"sessionId": "c1"}


async def test_an_announcement_naming_a_session_the_client_holds_is_ignored() -> None:
    with anyio.fail_after(TIMEOUT):
        async with fake_agent(script) as (client, fake):
            parent = await client.new_session()
            await send(fake, "s1", {"sessionUpdate": "subagent_update", "sessionId": "s1"})
            await send(fake, "s1", {"sessionUpdate": "subagent_update", "sessionId": "c2"})
            await until(parent, lambda: "c2" in parent.children)
            assert "s1" not in parent.children
            assert client._link.sessions["s1"] is parent


async def test_children_are_bounded_per_session() -> None:
    with anyio.fail_after(TIMEOUT * 3):
        async with fake_agent(script) as (client, fake):
            parent = await client.new_session()
            for n in range(MAX_CHILDREN + 5):
                await send(fake, "s1", {"sessionUpdate": "subagent_update", "sessionId": f"c{n}"})
            await until(parent, lambda: len(parent.state.subagents) == MAX_CHILDREN + 5)
            assert len(parent.children) == MAX_CHILDREN


async def test_closing_the_parent_releases_its_children() -> None:
    async def closing(fake: Any, msg: dict[str, Any]) -> None:
        if not await handshake(fake, msg) and msg.get("method") == "session/close":
            await fake.respond(msg, {})

    with anyio.fail_after(TIMEOUT):
        async with fake_agent(closing) as (client, fake):
            parent = await client.new_session()
            await send(fake, "s1", {"sessionUpdate": "subagent_update", "sessionId": "c1"})
            await until(parent, lambda: "c1" in parent.children)
            await parent.close()
            assert "c1" not in client._link.sessions


async def test_a_parent_tool_call_names_the_child_it_delegated_to() -> None:
    with anyio.fail_after(TIMEOUT):
        async with fake_agent(script) as (client, fake):
            parent = await client.new_session()
            await send(fake, "s1", {"sessionUpdate": "subagent_update", "sessionId": "c1"})
            call = {"sessionUpdate": "tool_call_update", "toolCallId": "t1", "title": "Delegate"}
            await send(fake, "s1", call)
            reference = {"type": "session", "sessionId": "c1"}
            link = {"sessionUpdate": "tool_call_content_chunk", "toolCallId": "t1"}
            await send(fake, "s1", link | {"content": reference})
            await until(
                parent,
                lambda: (
                    bool(parent.state.tool_calls.get("t1", None))
                    and bool(parent.state.tool_calls["t1"].content)
                ),
            )
            assert parent.state.tool_calls["t1"].content == [SessionReference(session_id="c1")]
            assert "c1" in parent.children

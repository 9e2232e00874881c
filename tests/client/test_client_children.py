"""Child sessions (Preview subagents, "subagent_update"): announced on the parent,
then the child's own messages routed to a session of its own; no client mutation of a
child unless its capabilities allow it."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from client_helpers import fake_agent, handshake

from acp2.client import PermissionRequest
from acp2.client.children import MAX_CHILDREN, SubagentSession
from acp2.errors import LocalProtocolError

pytestmark = pytest.mark.anyio

TIMEOUT = 10


def chunk(text: str) -> dict[str, Any]:
    return {
        "sessionUpdate": "agent_message_chunk",
        "messageId": "m1",
        "content": {"type": "text", "text": text},
    }


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
            await fake.update("s1", announce)
            await fake.update("c1", chunk("found it"))
            await fake.update(
                "c1", {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}
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
            await fake.update("s1", {"sessionUpdate": "subagent_update", "sessionId": "c1"})
            rid = await fake.request("session/request_permission", params)
            (answer,) = await fake.wait_for(lambda: fake.answers_to(rid))
            assert answer["result"]["outcome"]["optionId"] == "ok"
            assert asked[0].session is parent.children["c1"]


async def test_a_child_takes_no_prompt_close_or_option_and_cancel_only_when_allowed() -> None:
    with anyio.fail_after(TIMEOUT):
        async with fake_agent(script) as (client, fake):
            parent = await client.new_session()
            await fake.update("s1", {"sessionUpdate": "subagent_update", "sessionId": "c1"})
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
            await fake.update("s1", allowed)
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
            await fake.update("s1", {"sessionUpdate": "subagent_update", "sessionId": "s1"})
            await fake.update("s1", {"sessionUpdate": "subagent_update", "sessionId": "c2"})
            await until(parent, lambda: "c2" in parent.children)
            assert "s1" not in parent.children
            assert client._link.sessions["s1"] is parent


async def test_children_are_bounded_per_session() -> None:
    with anyio.fail_after(TIMEOUT * 3):
        async with fake_agent(script) as (client, fake):
            parent = await client.new_session()
            for n in range(MAX_CHILDREN + 5):
                await fake.update("s1", {"sessionUpdate": "subagent_update", "sessionId": f"c{n}"})
            await until(parent, lambda: len(parent.state.subagents) == MAX_CHILDREN + 5)
            assert len(parent.children) == MAX_CHILDREN


async def test_closing_the_parent_releases_its_children() -> None:
    async def closing(fake: Any, msg: dict[str, Any]) -> None:
        if not await handshake(fake, msg) and msg.get("method") == "session/close":
            await fake.respond(msg, {})

    with anyio.fail_after(TIMEOUT):
        async with fake_agent(closing) as (client, fake):
            parent = await client.new_session()
            await fake.update("s1", {"sessionUpdate": "subagent_update", "sessionId": "c1"})
            await until(parent, lambda: "c1" in parent.children)
            await parent.close()
            assert "c1" not in client._link.sessions

"""A resume's replay of a parent and its children (Preview subagents, RFD
session-replay-complete): a child announced in the parent's replay replays under its own
id until its own ``replay_complete``; a child left without its marker while the parent
got one is detected as truncated (``replay_truncated``; its state keeps what it held)."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from client_helpers import fake_agent, handshake

from acp2.client import ClientSession
from helpers.timeouts import TIMEOUT

pytestmark = pytest.mark.anyio

ANNOUNCE = {"sessionUpdate": "subagent_update", "sessionId": "c1", "title": "Researcher"}
CHILD_SAID = {
    "sessionUpdate": "agent_message",
    "messageId": "m1",
    "content": [{"type": "text", "text": "found it"}],
}
MARKER = {"sessionUpdate": "replay_complete"}


def _frame(session_id: str, update: dict[str, Any]) -> bytes:
    params = {"sessionId": session_id, "update": update}
    return json.dumps({"jsonrpc": "2.0", "method": "session/update", "params": params}).encode()


def _agent(frames: list[tuple[str, dict[str, Any]]]) -> Any:
    """A fake agent whose resume writes ``frames`` then its response, in one write."""

    async def script(fake: Any, msg: dict[str, Any]) -> None:
        if await handshake(fake, msg):
            return
        if msg.get("method") == "session/resume":
            response = json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {}}).encode()
            lines = [_frame(sid, u) for sid, u in frames] + [response]
            await fake.send(b"\n".join(lines) + b"\n")

    return script


async def _resume(frames: list[tuple[str, dict[str, Any]]]) -> ClientSession:
    with anyio.fail_after(TIMEOUT):
        async with fake_agent(_agent(frames)) as (client, _):
            return await client.resume("s1", replay=True)


async def test_a_child_announced_in_the_replay_replays_until_its_own_marker() -> None:
    seen: list[bool] = []
    frames = [("s1", ANNOUNCE), ("c1", CHILD_SAID), ("c1", MARKER), ("s1", MARKER)]

    async def script(fake: Any, msg: dict[str, Any]) -> None:
        await _agent(frames)(fake, msg)

    with anyio.fail_after(TIMEOUT):
        async with fake_agent(script) as (client, _):

            def watch(update: Any, raw: bytes) -> None:
                if "c1" in client.sessions and not seen:
                    child = client.sessions["c1"]
                    child.add_listener(lambda u, r: seen.append(child.replaying))

            parent = await client.resume("s1", replay=True, on_update=watch)
    child = parent.children["c1"]
    assert seen == [True, False]  # its message was history; its marker was not
    assert (child.replaying, child.replay_truncated, child.state.replays) == (False, False, 1)
    assert [m.text for m in child.state.messages.values()] == ["found it"]
    assert (parent.replay_truncated, parent.state.replays) == (False, 1)


async def test_a_child_without_its_marker_while_the_parent_got_one_is_truncated() -> None:
    parent = await _resume([("s1", ANNOUNCE), ("c1", CHILD_SAID), ("s1", MARKER)])
    child = parent.children["c1"]
    assert (child.replaying, child.replay_truncated) == (False, True)
    assert not parent.replay_truncated


async def test_an_agent_that_sends_no_markers_at_all_truncates_nothing() -> None:
    parent = await _resume([("s1", ANNOUNCE), ("c1", CHILD_SAID)])
    child = parent.children["c1"]
    assert (child.replaying, child.replay_truncated) == (False, False)
    assert not parent.replay_truncated


async def test_a_failed_resume_truncates_the_replay_of_the_parent_and_its_children() -> None:
    async def script(fake: Any, msg: dict[str, Any]) -> None:
        if await handshake(fake, msg):
            return
        if msg.get("method") == "session/resume":
            error = {"code": -32603, "message": "the store went away"}
            response = json.dumps({"jsonrpc": "2.0", "id": msg["id"], "error": error}).encode()
            lines = [_frame("s1", ANNOUNCE), _frame("c1", CHILD_SAID), response]
            await fake.send(b"\n".join(lines) + b"\n")

    holder: list[ClientSession] = []
    with anyio.fail_after(TIMEOUT):
        async with fake_agent(script) as (client, _):

            def keep(update: Any, raw: bytes) -> None:
                holder.append(client.sessions["s1"])

            with pytest.raises(Exception, match="the store went away"):
                await client.resume("s1", replay=True, on_update=keep)
            assert client.sessions.get("s1") is None  # the failed resume registers nothing
    parent = holder[0]
    assert (parent.replaying, parent.replay_truncated) == (False, True)
    child = parent.children["c1"]
    assert (child.replaying, child.replay_truncated) == (False, True)


async def test_a_rejoin_replays_a_known_child_into_its_state_without_doubling_it() -> None:
    chunk = {
        "sessionUpdate": "agent_message_chunk",
        "messageId": "m1",
        "content": {"type": "text", "text": "found it"},
    }
    frames = [("s1", ANNOUNCE), ("c1", chunk), ("c1", MARKER), ("s1", MARKER)]
    with anyio.fail_after(TIMEOUT):
        async with fake_agent(_agent(frames)) as (client, _):
            parent = await client.resume("s1", replay=True)
            child = parent.children["c1"]
            await client.rejoin(parent)  # as connect_url does after a reconnect
            assert parent.children["c1"] is child
    assert [m.text for m in child.state.messages.values()] == ["found it"]
    assert (child.state.replays, child.replaying, child.replay_truncated) == (2, False, False)


async def test_a_childs_marker_after_the_answer_takes_the_truncated_flag_back() -> None:
    # Streamable HTTP: the child's replay travels on its own stream, which the resume's
    # answer (on the parent's) may overtake. The late marker says the replay did finish.
    before = [("s1", ANNOUNCE), ("s1", MARKER)]
    after = [("c1", CHILD_SAID), ("c1", MARKER)]

    async def script(fake: Any, msg: dict[str, Any]) -> None:
        await _agent(before)(fake, msg)
        if msg.get("method") == "session/resume":
            await fake.send(b"\n".join(_frame(sid, u) for sid, u in after) + b"\n")

    with anyio.fail_after(TIMEOUT):
        async with fake_agent(script) as (client, _):
            parent = await client.resume("s1", replay=True)
            child = parent.children["c1"]
            healed = anyio.Event()
            child.add_listener(lambda update, raw: healed.set() if child.state.replays else None)
            await healed.wait()
    assert (child.state.replays, child.replay_truncated) == (1, False)
    assert [m.text for m in child.state.messages.values()] == ["found it"]

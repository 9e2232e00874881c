"""The client's replay boundary (RFD session-replay-complete) and resuming a held state.

While a resume's replay runs, ``session.replaying`` is True for the listeners; the replay
ends at the agent's ``replay_complete`` or, from an agent that sends none, at the resume
response -- also when live updates arrive in the same read as the response or the
marker. Resuming with ``known=`` (the state of a session the client saw part of) never
doubles a message, in the state or in what listeners and works are handed.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import anyio
import pytest
from client_helpers import fake_agent, handshake, in_process

from acp2.client import ClientSession
from acp2.errors import ResourceNotFound
from acp2.schema import ReplayComplete
from acp2.state import MessageState, entity_key
from helpers.timeouts import PROCESS_TIMEOUT, TIMEOUT

pytestmark = pytest.mark.anyio


def _frame(update: dict[str, Any]) -> bytes:
    params = {"sessionId": "s1", "update": update}
    return json.dumps({"jsonrpc": "2.0", "method": "session/update", "params": params}).encode()


def _chunk(kind: str, message_id: str, text: str) -> dict[str, Any]:
    return {
        "sessionUpdate": f"{kind}_message_chunk",
        "messageId": message_id,
        "content": {"type": "text", "text": text},
    }


#: What the agent sent live before the client's connection dropped: half of a turn.
SEEN = [
    _chunk("user", "u1", "say hello"),
    {"sessionUpdate": "state_update", "state": "running"},
    _chunk("agent", "m1", "hel"),
]
#: The whole turn, as an agent that replays chunk by chunk sends it.
REPLAY = [
    _chunk("user", "u1", "say hello"),
    _chunk("agent", "m1", "hel"),
    _chunk("agent", "m1", "lo"),
    {"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "completed"},
]
LIVE = _chunk("agent", "m2", "live after the resume")
IDLE = {"sessionUpdate": "state_update", "state": "idle"}
MARKER = {"sessionUpdate": "replay_complete"}


def _agent(resume_frames: list[dict[str, Any]], *, after: Sequence[dict[str, Any]] = ()) -> Any:
    """A fake agent: a prompt streams :data:`SEEN` (and never ends); a resume writes
    ``resume_frames``, its response and ``after`` in one write (one read for the client)."""

    async def script(fake: Any, msg: dict[str, Any]) -> None:
        if await handshake(fake, msg):
            return
        method = msg.get("method")
        if method == "session/prompt":
            await fake.respond(msg, {"messageId": "u1"})
            await fake.send(b"\n".join(_frame(u) for u in SEEN) + b"\n")
        elif method == "session/resume":
            response = json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {}}).encode()
            frames = [_frame(u) for u in resume_frames] + [response]
            frames += [_frame(u) for u in after]
            await fake.send(b"\n".join(frames) + b"\n")

    return script


async def _half_seen_state() -> Any:
    """The state of a session whose connection dropped in the middle of a turn."""
    saw_agent = anyio.Event()

    def listener(update: Any, raw: bytes) -> None:
        if entity_key(update) == ("agent", "m1"):
            saw_agent.set()

    async with fake_agent(_agent([])) as (client, _):
        session = await client.new_session(on_update=listener)
        await session.prompt("say hello")
        with anyio.fail_after(TIMEOUT):
            await saw_agent.wait()
    return session.state


def _texts(session: ClientSession) -> list[str]:
    return [e.text for e in session.state.timeline if isinstance(e, MessageState)]


class _Listener:
    """Records each update a session hands on, with ``session.replaying`` at that time
    (the session is the one registered for the id: resume attaches it before it asks)."""

    def __init__(self, client: Any, session_id: str = "s1") -> None:
        self.client = client
        self.session_id = session_id
        self.seen: list[tuple[Any, bool]] = []

    def __call__(self, update: Any, raw: bytes) -> None:
        self.seen.append((update, self.client.sessions[self.session_id].replaying))


async def _resume(client: Any, listener: _Listener, **kwargs: Any) -> ClientSession:
    session: ClientSession = await client.resume(
        listener.session_id, replay=True, on_update=listener, **kwargs
    )
    return session


async def test_a_resume_into_a_half_seen_state_doubles_no_message_without_replay_complete() -> None:
    held = await _half_seen_state()
    assert held.messages[("agent", "m1")].text == "hel"
    async with fake_agent(_agent([*REPLAY, IDLE], after=[LIVE])) as (client, _):
        listener = _Listener(client)
        with anyio.fail_after(TIMEOUT):
            session = await _resume(client, listener, known=held)
            assert session.state is held
            assert _texts(session) == ["say hello", "hello", "live after the resume"]
            assert session.state.tool_calls["t1"].status == "completed"
            assert not session.replaying
    # Replayed updates about what the client held are not handed on again; the new tool
    # call is (as replayed history); the live chunk read with the response is live.
    handed = [(entity_key(u), replaying) for u, replaying in listener.seen]
    assert handed == [(("tool_call", "t1"), True), (None, True), (("agent", "m2"), False)]


async def test_replay_complete_is_the_boundary_even_within_one_read() -> None:
    frames = [REPLAY[0], REPLAY[1], MARKER, IDLE]
    async with fake_agent(_agent(frames, after=[LIVE])) as (client, _):
        listener = _Listener(client)
        with anyio.fail_after(TIMEOUT):
            session = await _resume(client, listener)
    kinds = [(type(u).__name__, replaying) for u, replaying in listener.seen]
    assert kinds == [
        ("UserMessageChunk", True),
        ("AgentMessageChunk", True),
        ("ReplayComplete", False),
        ("StateUpdate", False),
        ("AgentMessageChunk", False),
    ]
    assert session.state.replays == 1
    assert _texts(session) == ["say hello", "hel", "live after the resume"]
    assert isinstance(listener.seen[2][0], ReplayComplete)


async def test_a_failed_resume_ends_the_replay_and_keeps_the_old_object() -> None:
    async def script(fake: Any, msg: dict[str, Any]) -> None:
        if await handshake(fake, msg):
            return
        if msg.get("method") == "session/resume":
            await fake.update("s1", REPLAY[0])
            await fake.error(msg, -32002, "gone", {"sessionId": "s1"})

    async with fake_agent(script) as (client, _):
        old = await client.new_session()
        with anyio.fail_after(TIMEOUT), pytest.raises(ResourceNotFound):
            await client.resume("s1", replay=True)
        assert client.sessions["s1"] is old
        assert not old.replaying


async def test_resuming_the_acp2_agent_into_the_state_the_client_holds_doubles_nothing() -> None:
    """The acp2 agent sends replay_complete; works and listeners see only what is new."""
    with anyio.fail_after(PROCESS_TIMEOUT):
        async with in_process() as client:
            first = await client.new_session()
            await (await first.prompt("echo one")).wait()
            await (await first.prompt("echo two")).wait()
            before = _texts(first)
            held = set(first.state.messages)
            listener = _Listener(client, first.id)
            resumed = await _resume(client, listener, known=first.state)
            assert resumed.state is first.state
            assert _texts(resumed) == before == ["echo one", "one", "echo two", "two"]
            assert resumed.state.replays == 1
            replayed = [u for u, replaying in listener.seen if replaying]
            assert [entity_key(u) for u in replayed if entity_key(u) is not None] == []
            work = await resumed.prompt("echo three")
            assert await work.wait() == "end_turn"
            assert work.text == "three"
            assert not {entity_key(u) for u in work.updates} & held
            assert _texts(resumed) == [*before, "echo three", "three"]

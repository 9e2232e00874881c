"""The back bridge in process, the order of a prompt's work: acp2's client drives a v1
agent (acp2's own JSON-RPC ``Connection`` with the v1 method table) over a direct pair,
whose client end records when each frame is written."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

import acp2.compat.v1.methods as v1m
import acp2.compat.v1.schema as v1
import acp2.schema as v2
from acp2.client import connect_transport
from acp2.rpc import Connection
from acp2.schema.codec import encode
from acp2.transport.direct import DirectTransport, direct_pair
from helpers.timeouts import TIMEOUT

SESSION = "v1-session"
RESULT = v1.InitializeResponse(protocol_version=1, agent_capabilities=v1.AgentCapabilities())


class Recording(DirectTransport):
    """A direct-pair end that logs the method of every request it writes."""

    __slots__ = ("log",)

    def __init__(self, end: DirectTransport, log: list[str]) -> None:
        super().__init__(end._tx, end._rx)
        self.log = log

    def send_nowait(self, data: bytes) -> int:
        for line in data.split(b"\n"):
            if b'"method":"session/prompt"' in line:
                self.log.append("v1 session/prompt written")
        return super().send_nowait(data)


async def _new(params: v1.NewSessionRequest) -> v1.NewSessionResponse:
    return v1.NewSessionResponse(session_id=SESSION)


async def _prompt(params: v1.PromptRequest) -> v1.PromptResponse:
    return v1.PromptResponse(stop_reason="end_turn")


async def _initialize(params: v1.InitializeRequest) -> v1.InitializeResponse:
    return RESULT


@pytest.mark.anyio
async def test_the_v1_prompt_is_written_before_the_client_hears_user_message_and_running() -> None:
    log: list[str] = []
    client_end, agent_end = direct_pair()
    agent = Connection(agent_end, name="in-process v1 agent")
    for spec, handler in ((v1m.INITIALIZE, _initialize), (v1m.SESSION_NEW, _new)):
        agent.on(spec, handler)
    agent.on(v1m.SESSION_PROMPT, _prompt)
    with anyio.fail_after(TIMEOUT):
        async with agent, connect_transport(Recording(client_end, log)) as client:
            session = await client.new_session()

            def heard(update: Any, raw: bytes) -> None:
                log.append(type(update).__name__)

            session.add_listener(heard)
            assert await (await session.prompt("hi")).wait() == "end_turn"
    assert log == ["v1 session/prompt written", "UserMessage", "StateUpdate", "StateUpdate"]


@pytest.mark.anyio
async def test_a_listener_of_a_bridged_session_gets_each_lifted_update_as_its_json() -> None:
    heard: list[tuple[Any, bytes]] = []
    client_end, agent_end = direct_pair()
    agent = Connection(agent_end, name="in-process v1 agent")
    for spec, handler in ((v1m.INITIALIZE, _initialize), (v1m.SESSION_NEW, _new)):
        agent.on(spec, handler)
    chunk = v1.AgentMessageChunk(content=v1.TextContent(text="hello"), message_id="m1")
    with anyio.fail_after(TIMEOUT):
        async with agent, connect_transport(client_end) as client:
            session = await client.new_session()
            arrived = anyio.Event()

            def listener(update: Any, raw: bytes) -> None:
                heard.append((update, raw))
                arrived.set()

            session.add_listener(listener)
            note = v1.SessionNotification(session_id=SESSION, update=chunk)
            await agent.notify(v1m.SESSION_UPDATE, note)
            await arrived.wait()
    ((update, raw),) = heard
    assert update == v2.AgentMessageChunk(message_id="m1", content=v2.TextContent(text="hello"))
    assert raw == encode(update)

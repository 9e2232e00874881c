"""The v2 face the back bridge shows for a v1 agent (issue 26, fault 4).

A v1 agent knows nothing of v2's foreground states or of ``$/cancel_request``; the
bridge makes up what the v2 rules require of an agent: ``requires_action`` while a v1
permission question waits for the client and ``running`` after it (PL-09), the question
withdrawn on ``session/cancel`` (PL-16), a ``state_update`` before a resume's answer
(SS-16), and a prompt block type the v1 agent never advertised refused with ``-32602``
instead of forwarded (PL-02). The client tests run both ways (``back_ways``); the wire
tests speak raw v2 JSON-RPC to ``serve_back_transports``, as ``acp2 bridge`` serves it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import anyio
import back_ways
import msgspec
import pytest

import acp2.compat.v1.methods as v1m
import acp2.compat.v1.schema as v1
import acp2.schema as v2
import acp2.schema.methods as v2m
from acp2.bridge.back import serve_back_transports
from acp2.client import PermissionRequest, allow_all
from acp2.errors import InvalidParams, MethodNotFound
from acp2.rpc import Connection
from acp2.transport.memory import memory_pair
from helpers.timeouts import TIMEOUT

pytestmark = pytest.mark.anyio

SESSION = "v1-face"
CWD = "/tmp"
RESULT = v1.InitializeResponse(
    protocol_version=1,
    agent_info=v1.Implementation(name="face-v1-agent", version="1"),
    agent_capabilities=v1.AgentCapabilities(load_session=True),
)
OPTIONS = [
    v1.PermissionOption(option_id="yes", name="Allow", kind="allow_once"),
    v1.PermissionOption(option_id="no", name="Reject", kind="reject_once"),
]


class AskingAgent:
    """A v1 agent whose every prompt asks one permission question, then ends its turn
    with ``cancelled`` when the answer was ``cancelled`` and ``end_turn`` otherwise."""

    def __init__(self, agent: Connection) -> None:
        self.agent = agent
        self.outcomes: list[Any] = []
        self.prompts = 0
        agent.on(v1m.SESSION_NEW, self.new)
        agent.on(v1m.SESSION_LOAD, self.load)
        agent.on(v1m.SESSION_PROMPT, self.prompt)

    async def new(self, params: v1.NewSessionRequest) -> v1.NewSessionResponse:
        return v1.NewSessionResponse(session_id=SESSION)

    async def load(self, params: v1.LoadSessionRequest) -> v1.LoadSessionResponse:
        chunk = v1.UserMessageChunk(content=v1.TextContent(text="earlier"))
        await self.agent.notify(
            v1m.SESSION_UPDATE, v1.SessionNotification(session_id=SESSION, update=chunk)
        )
        return v1.LoadSessionResponse()

    async def prompt(self, params: v1.PromptRequest) -> v1.PromptResponse:
        self.prompts += 1
        call = v1.ToolCallUpdate(tool_call_id="t1", title="Edit a.txt", kind="edit")
        question = v1.RequestPermissionRequest(session_id=SESSION, tool_call=call, options=OPTIONS)
        answer = await self.agent.call(v1m.SESSION_REQUEST_PERMISSION, question)
        self.outcomes.append(answer.outcome)
        cancelled = isinstance(answer.outcome, v1.CancelledPermissionOutcome)
        return v1.PromptResponse(stop_reason="cancelled" if cancelled else "end_turn")


@pytest.fixture(params=back_ways.WAYS)
def way(request: pytest.FixtureRequest) -> str:
    """The client tests run both ways (see ``back_ways``)."""
    back_ways.WAY = request.param
    return str(request.param)


def _states(into: list[str]) -> Any:
    def listen(update: Any, raw: bytes) -> None:
        if isinstance(update, v2.StateUpdate):
            into.append(update.state)

    return listen


async def test_a_pending_v1_permission_shows_requires_action_then_running(way: str) -> None:
    states: list[str] = []
    seen_while_asked: list[str] = []
    holder: dict[str, Any] = {}

    async def policy(request: PermissionRequest) -> Any:
        seen_while_asked.append(holder["session"].state.foreground)
        return allow_all(request)

    with anyio.fail_after(TIMEOUT):
        agent_of: dict[str, AskingAgent] = {}
        setup = lambda agent: agent_of.setdefault("a", AskingAgent(agent))  # noqa: E731
        async with back_ways.client_of(setup, RESULT, permissions=policy) as (_, client):
            session = holder["session"] = await client.new_session(on_update=_states(states))
            work = await session.prompt("edit it")
            assert await work.wait() == "end_turn"
    assert seen_while_asked == ["requires_action"]
    assert states == ["running", "requires_action", "running", "idle"]
    assert agent_of["a"].outcomes == [v1.SelectedPermissionOutcome(option_id="yes")]


async def test_session_cancel_withdraws_a_pending_v1_permission_and_the_turn_ends_cancelled(
    way: str,
) -> None:
    states: list[str] = []
    asked = anyio.Event()
    withdrawn = anyio.Event()

    async def policy(request: PermissionRequest) -> Any:
        asked.set()
        try:
            await anyio.sleep_forever()
        finally:
            withdrawn.set()

    with anyio.fail_after(TIMEOUT):
        agent_of: dict[str, AskingAgent] = {}
        setup = lambda agent: agent_of.setdefault("a", AskingAgent(agent))  # noqa: E731
        async with back_ways.client_of(setup, RESULT, permissions=policy) as (_, client):
            session = await client.new_session(on_update=_states(states))
            work = await session.prompt("edit it")
            await asked.wait()
            await session.cancel(wait=False)
            await withdrawn.wait()  # the question was taken back ($/cancel_request)
            assert await work.wait() == "cancelled"
    assert agent_of["a"].outcomes == [v1.CancelledPermissionOutcome()]
    # Out of requires_action by the turn's end, never back to running (PL-09).
    assert states == ["running", "requires_action", "idle"]


@asynccontextmanager
async def wire(result: v1.InitializeResponse = RESULT) -> AsyncIterator[tuple[Connection, Any]]:
    """A raw v2 connection to ``serve_back_transports`` (``acp2 bridge``'s back side) in
    front of an :class:`AskingAgent`, initialized, with the notifications it received."""
    client_end, bridge_v2 = memory_pair()
    bridge_v1, agent_end = memory_pair()
    agent = Connection(agent_end, name="v1 agent")
    asking = AskingAgent(agent)
    seen: list[Any] = []
    v2_client = Connection(client_end, name="v2 client")
    v2_client.on(v2m.SESSION_UPDATE, lambda note: seen.append(note.update))
    async with agent, anyio.create_task_group() as tg:
        tg.start_soon(partial(serve_back_transports, bridge_v2, bridge_v1, result))
        async with v2_client:
            info = v2.Implementation(name="raw", version="1")
            await v2_client.call(
                v2m.INITIALIZE, v2.InitializeRequest(protocol_version=2, info=info)
            )
            yield v2_client, (asking, seen)
        tg.cancel_scope.cancel()


async def test_a_block_type_the_v1_agent_did_not_advertise_is_refused_before_it_is_sent() -> None:
    image = v2.ImageContent(data="aGk=", mime_type="image/png")
    with anyio.fail_after(TIMEOUT):
        async with wire() as (client, (asking, _)):
            await client.call(v2m.SESSION_NEW, v2.NewSessionRequest(cwd=CWD))
            request = v2.PromptRequest(session_id=SESSION, prompt=[image])
            with pytest.raises(InvalidParams, match=r"session\.prompt\.image"):
                await client.call(v2m.SESSION_PROMPT, request)
    assert asking.prompts == 0


async def test_a_resume_sends_the_foreground_state_before_its_answer() -> None:
    order: list[str] = []
    with anyio.fail_after(TIMEOUT):
        async with wire() as (client, (_, seen)):
            request = v2.ResumeSessionRequest(
                session_id=SESSION, cwd=CWD, replay_from=v2.ReplayFromStart()
            )
            await client.call(v2m.SESSION_RESUME, request)
            order = [type(update).__name__ for update in seen]
            last = seen[-1]
    assert order[-1] == "StateUpdate"
    assert isinstance(last, v2.StateUpdate)
    assert last.state == "idle"
    assert "UserMessageChunk" in order[:-1]  # the replay came first


async def test_extension_requests_and_notifications_pass_through_the_bridge_both_ways() -> None:
    got_by_agent: list[Any] = []
    got_by_client: list[Any] = []
    both = anyio.Event()

    def got(into: list[Any], method: str, params: Any) -> None:
        into.append((method, bytes(params)))
        if got_by_agent and got_by_client:
            both.set()

    with anyio.fail_after(TIMEOUT):
        async with wire() as (client, (asking, _)):
            agent = asking.agent

            async def agent_ext(method: str, params: Any) -> Any:
                return {"echo": method, "params": msgspec.json.decode(params)}

            agent.on_unknown_request(agent_ext)
            agent.on_unknown_notification(partial(got, got_by_agent))
            client.on_unknown_notification(partial(got, got_by_client))

            async def client_ext(method: str, params: Any) -> Any:
                return {"client": method}

            client.on_unknown_request(client_ext)
            answer = await client.request("_zed/ping", {"n": 1}, dict)
            back = await agent.request("_agent/ask", {"q": 2}, dict)
            await client.notify("_zed/note", {"a": 1})
            await agent.notify("_agent/note", {"b": 2})
            with pytest.raises(MethodNotFound):
                await client.request("unknown/method", {}, dict)
            await both.wait()
    assert answer == {"echo": "_zed/ping", "params": {"n": 1}}
    assert back == {"client": "_agent/ask"}
    assert got_by_agent == [("_zed/note", b'{"a":1}')]
    assert got_by_client == [("_agent/note", b'{"b":2}')]

"""Several clients on one session, end to end (issue 15): the acp2 client runtime attaches
to sessions of one in-process acp2 agent through the public API only, and every frame on
every connection is validated against both drafts.

Each test runs over the in-memory pairs (every frame validated at the agent's end) and
through acp2's serve app over WebSocket and Streamable HTTP (a token per principal).
There is no stdio or v1 variant: a process's stdin/stdout is one connection, so a second
client needs a transport that accepts several, and v1 clients cannot attach.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from e2e_agent import build_agent

from acp2.client import (
    ClientConnection,
    ClientSession,
    PermissionRequest,
    allow_all,
    deny_all,
)
from acp2.errors import ResourceNotFound
from acp2.schema import StateUpdate
from acp2.transport.base import Transport
from helpers.inprocess import Serving, serving
from helpers.timeouts import SCENARIO_TIMEOUT
from schema_validation import Conversation

pytestmark = pytest.mark.anyio


class Validated:
    """The agent's end of one connection: every line either way is validated."""

    def __init__(self, transport: Transport, problems: list[str]) -> None:
        self.transport = transport
        self.problems = problems
        self._drafts = [Conversation("aug"), Conversation("nov")]
        self._partial = {"agent": b"", "client": b""}

    def _check(self, sender: str, data: bytes) -> None:
        lines = (self._partial[sender] + data).split(b"\n")
        self._partial[sender] = lines.pop()
        for line in filter(None, lines):
            frame = json.loads(line)
            for conversation in self._drafts:
                found = conversation.validate(frame, sender)  # type: ignore[arg-type]
                self.problems += [f"[{conversation.draft}] {p}" for p in found]

    async def receive(self) -> bytes:
        data = await self.transport.receive()
        self._check("client", data)
        return data

    async def send(self, data: bytes) -> None:
        self._check("agent", data)
        await self.transport.send(data)

    async def aclose(self) -> None:
        await self.transport.aclose()


class Desk:
    """Connects clients of one agent; :meth:`open` -> an initialized ClientConnection."""

    def __init__(self, agents: Serving, over: str) -> None:
        self.agent = agents.agent
        self.agents = agents
        self.over = over
        self.problems: list[str] = []

    async def open(self, principal: object = None, **options: Any) -> ClientConnection:
        options.setdefault("permissions", deny_all)
        if self.over == "memory":
            options["wrap"] = lambda theirs: Validated(theirs, self.problems)
        return await self.agents.connect(
            over=self.over, principal=principal, cwd=str(Path.cwd()), **options
        )


#: The ways several clients can reach one agent (v1 and stdio: see the module docstring).
OVERS = ("memory", "websocket", "http")


@pytest.fixture(params=OVERS)
def over(request: pytest.FixtureRequest) -> str:
    """How this run's clients reach the agent."""
    way: str = request.param
    return way


@asynccontextmanager
async def desk(tmp_path: Path, over: str) -> AsyncIterator[Desk]:
    store = tmp_path / "history.db"
    with anyio.fail_after(SCENARIO_TIMEOUT):
        async with serving(build_agent(str(store))) as agents:
            found = Desk(agents, over)
            yield found
    found.agent.history().close()
    assert not found.problems, "\n".join(found.problems[:20])


class Seen:
    """The live updates a session receives (as their JSON), and a wait for its idles."""

    def __init__(self, session: ClientSession) -> None:
        self.raw: list[bytes] = []
        self.idles = 0
        self._changed = anyio.Event()
        session.add_listener(self._on)

    def _on(self, update: Any, raw: bytes) -> None:
        self.raw.append(raw)
        if isinstance(update, StateUpdate) and update.state == "idle":
            self.idles += 1
        self._changed.set()
        self._changed = anyio.Event()

    async def idle(self, count: int = 1) -> None:
        while self.idles < count:
            await self._changed.wait()


async def test_an_observer_sees_the_whole_turn_byte_for_byte_as_the_owner(
    tmp_path: Path, over: str
) -> None:
    async with desk(tmp_path, over) as d:
        owner, other = await d.open(), await d.open()
        mine = await owner.new_session()
        await (await mine.prompt("echo earlier")).wait()
        watched = await other.attach(mine.id)
        assert [m.text for m in watched.state.messages.values()] == ["echo earlier", "earlier"]
        theirs, ours = Seen(watched), Seen(mine)
        assert await (await mine.prompt("show")).wait() == "end_turn"
        await theirs.idle()
    assert theirs.raw == ours.raw
    assert watched.state.plans == mine.state.plans
    assert watched.state.usage == mine.state.usage


async def test_a_controllers_answer_wins_and_the_owners_question_is_withdrawn(
    tmp_path: Path, over: str
) -> None:
    withdrawn = anyio.Event()

    async def away_from_keyboard(request: PermissionRequest) -> Any:
        try:
            await anyio.sleep_forever()
        finally:
            withdrawn.set()

    async with desk(tmp_path, over) as d:
        owner = await d.open(permissions=away_from_keyboard)
        other = await d.open(permissions=allow_all)
        mine = await owner.new_session()
        await other.attach(mine.id, role="controller")
        work = await mine.prompt("ask")
        assert await work.wait() == "end_turn"
        await withdrawn.wait()
    assert work.text == "allowed"


async def test_a_controllers_cancel_is_the_idle_everyone_sees(tmp_path: Path, over: str) -> None:
    async with desk(tmp_path, over) as d:
        owner, other, third = await d.open(), await d.open(), await d.open()
        mine = await owner.new_session()
        helping = await other.attach(mine.id, role="controller")
        watched = await third.attach(mine.id)
        seen = Seen(watched)
        work = await mine.prompt("wait")
        await helping.cancel()
        assert await work.wait() == "cancelled"
        await seen.idle()
    assert watched.state.stop_reason == helping.state.stop_reason == "cancelled"


async def test_the_owner_leaving_mid_turn_keeps_the_others_stream_to_its_idle(
    tmp_path: Path, over: str
) -> None:
    async with desk(tmp_path, over) as d:
        owner, other, third = await d.open(), await d.open(), await d.open()
        mine = await owner.new_session()
        helping = await other.attach(mine.id, role="controller")
        watched = await third.attach(mine.id)
        seen = Seen(watched)
        await mine.prompt("wait")
        await owner.aclose()  # the owner's terminal is closed mid-turn
        await helping.cancel()
        await seen.idle()
        work = await helping.prompt("echo still here")
        assert await work.wait() == "end_turn"
        await seen.idle(2)
    assert [m.text for m in watched.state.messages.values()][-1] == "still here"


async def test_a_client_of_another_principal_cannot_attach(tmp_path: Path, over: str) -> None:
    async with desk(tmp_path, over) as d:
        owner, stranger = await d.open("alice"), await d.open("mallory")
        mine = await owner.new_session()
        with pytest.raises(ResourceNotFound):
            await stranger.attach(mine.id)
        assert mine.id not in stranger.sessions

"""``ClientConnection.attach``: a second client watches or co-drives a live session of the
same in-process agent (issue 15), and unattended policies mark their answers implicit."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from client_helpers import CWD

from acp2.client import (
    ClientConnection,
    ClientSession,
    PermissionRequest,
    allow_all,
    deny_all,
)
from acp2.client.elicitation import accept_defaults, decline_all
from acp2.client.permissions import CANCELLED_OUTCOME, is_unattended, marked
from acp2.errors import InvalidRequest, LocalProtocolError
from acp2.schema import StateUpdate
from acp2.schema.extensions import is_implicit
from acp2.testing.scenarios import build_test_agent
from acp2.transport.base import Transport
from helpers.inprocess import serving
from helpers.timeouts import PROCESS_TIMEOUT

pytestmark = pytest.mark.anyio


class Heard:
    """The agent's end of a transport, noting when the agent received ``needle``."""

    def __init__(self, transport: Transport, needle: bytes) -> None:
        self.transport = transport
        self.needle = needle
        self.heard = anyio.Event()

    async def receive(self) -> bytes:
        data = await self.transport.receive()
        if self.needle in data:
            self.heard.set()
        return data

    async def send(self, data: bytes) -> None:
        await self.transport.send(data)

    async def aclose(self) -> None:
        await self.transport.aclose()


#: The agent's end of the first client's transport in :func:`two_clients`.
FIRST: list[Heard] = []


@asynccontextmanager
async def two_clients(agent: Any = None, **second: Any) -> AsyncIterator[list[ClientConnection]]:
    """The same agent served twice in process; the second client connected with ``second``.
    The first client's agent end is ``FIRST[-1]`` (it notes an implicit answer arriving)."""
    agent = agent if agent is not None else build_test_agent()

    def heard(transport: Transport) -> Heard:
        FIRST.append(found := Heard(transport, b'"implicit":true'))
        return found

    with anyio.fail_after(PROCESS_TIMEOUT):
        async with serving(agent) as agents:
            yield [
                await agents.connect(wrap=heard, cwd=CWD, permissions=deny_all),
                await agents.connect(cwd=CWD, **{"permissions": deny_all, **second}),
            ]


class Idles:
    """Counts the idle updates a session receives; :meth:`wait` for the n-th."""

    def __init__(self, session: ClientSession) -> None:
        self.count = 0
        self._changed = anyio.Event()
        session.add_listener(self._on_update)

    def _on_update(self, update: Any, raw: bytes) -> None:
        if isinstance(update, StateUpdate) and update.state == "idle":
            self.count += 1
            self._changed.set()
            self._changed = anyio.Event()

    async def wait(self, count: int) -> None:
        while self.count < count:
            await self._changed.wait()


def _story(session: ClientSession) -> list[tuple[Any, ...]]:
    return [(m.kind, m.message_id, m.text) for m in session.state.messages.values()]


async def test_an_observer_session_holds_the_history_and_follows_the_live_turn() -> None:
    async with two_clients() as (owner, other):
        mine = await owner.new_session()
        assert await (await mine.prompt("echo before")).wait() == "end_turn"
        watched = await other.attach(mine.id)
        assert _story(watched) == _story(mine)
        assert watched.role == "observer"
        assert watched.cwd == CWD
        assert not watched.replaying
        idles = Idles(watched)
        assert await (await mine.prompt("think hard")).wait() == "end_turn"
        await idles.wait(1)
    assert _story(watched) == _story(mine)
    assert watched.state.foreground == "idle"
    assert watched.state.stop_reason == mine.state.stop_reason == "end_turn"


async def test_an_observers_prompt_is_refused_by_the_agent_and_its_cancel_locally() -> None:
    async with two_clients() as (owner, other):
        mine = await owner.new_session()
        watched = await other.attach(mine.id)
        with pytest.raises(InvalidRequest, match="observer"):
            await watched.prompt("echo mine")
        work = await mine.prompt("wait")
        with pytest.raises(LocalProtocolError, match="observer"):
            await watched.cancel()
        assert await work.cancel() == "cancelled"


async def _after_the_owners_deny_all(request: PermissionRequest) -> Any:
    await FIRST[-1].heard.wait()  # the owner's implicit decline reached the agent first
    return allow_all(request)


async def test_a_person_on_a_controller_wins_over_the_owners_earlier_deny_all() -> None:
    async with two_clients(permissions=_after_the_owners_deny_all) as (owner, other):
        mine = await owner.new_session()
        helping = await other.attach(mine.id, role="controller")
        assert helping.role == "controller"
        assert await (await mine.prompt("tools")).wait() == "end_turn"
        (call,) = mine.state.tool_calls.values()
    assert call.status == "completed"


async def test_a_controllers_cancel_ends_the_owners_work() -> None:
    async with two_clients() as (owner, other):
        mine = await owner.new_session()
        helping = await other.attach(mine.id, role="controller")
        work = await mine.prompt("wait")
        idles = Idles(helping)
        await helping.cancel()
        assert await work.wait() == "cancelled"
        await idles.wait(1)
    assert helping.state.stop_reason == "cancelled"


async def test_closing_an_attached_session_leaves_the_owner_working() -> None:
    async with two_clients() as (owner, other):
        mine = await owner.new_session()
        watched = await other.attach(mine.id)
        await watched.close()
        assert await (await mine.prompt("echo still here")).wait() == "end_turn"
    assert watched.closed


async def test_attach_is_refused_locally_when_the_agent_does_not_advertise_it() -> None:
    agent = build_test_agent()
    agent.attach = False
    async with two_clients(agent) as (owner, other):
        mine = await owner.new_session()
        with pytest.raises(LocalProtocolError, match="attach"):
            await other.attach(mine.id)
        assert mine.id not in other.sessions


def test_deny_all_and_decline_all_mark_their_answers_implicit_and_allow_all_does_not() -> None:
    assert is_unattended(deny_all)
    assert is_unattended(decline_all)
    assert not is_unattended(allow_all)
    assert not is_unattended(accept_defaults)
    assert is_implicit(marked(CANCELLED_OUTCOME, deny_all))
    assert not is_implicit(marked(CANCELLED_OUTCOME, allow_all))
    assert not is_implicit(CANCELLED_OUTCOME)  # the shared constant is not changed

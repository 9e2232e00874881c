"""A request handler may return a ``Later`` and answer after it returned (acp2.rpc.later)."""

from __future__ import annotations

from typing import Any

import anyio
import msgspec
import pytest

from acp2.errors import InvalidParams, RequestError
from acp2.rpc import Connection, Later
from acp2.transport.memory import memory_pair
from helpers import TIMEOUT, raw_peer

pytestmark = pytest.mark.anyio


def request(rid: Any, method: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": {}}


def cancel(rid: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": rid}}


class Held:
    """A handler that returns a Later and keeps it (and counts its cancels)."""

    def __init__(self) -> None:
        self.later: Later[Any] | None = None
        self.cancelled = 0
        self.returned = anyio.Event()

    async def __call__(self, _: Any) -> Later[Any]:
        self.later = Later(on_cancel=self.on_cancel)
        self.returned.set()
        return self.later

    def on_cancel(self) -> None:
        self.cancelled += 1


async def test_a_later_answers_its_request_when_resolved_after_the_handler_returned() -> None:
    held = Held()
    async with raw_peer() as (conn, wire):
        conn.on_request("hold", msgspec.Raw, held)
        await wire.send_json(request(1, "hold"))
        await wire.ping()  # served, returned, and still unanswered
        assert held.later is not None
        held.later.resolve({"done": True})
        held.later.resolve({"done": False})  # only the first outcome counts
        assert await wire.frame() == {"jsonrpc": "2.0", "id": 1, "result": {"done": True}}
        await wire.ping()


async def test_a_later_resolved_before_its_handler_returned_is_answered_at_once() -> None:
    async def early(_: Any) -> Later[str]:
        later: Later[str] = Later()
        later.resolve("early")
        return later

    async with raw_peer() as (conn, wire):
        conn.on_request("early", msgspec.Raw, early)
        await wire.send_json(request("e", "early"))
        assert await wire.frame() == {"jsonrpc": "2.0", "id": "e", "result": "early"}


async def test_a_failed_later_answers_its_error() -> None:
    held = Held()
    async with raw_peer() as (conn, wire):
        conn.on_request("hold", msgspec.Raw, held)
        await wire.send_json(request(2, "hold"))
        await wire.ping()
        assert held.later is not None
        held.later.fail(InvalidParams("no such thing"))
        answer = await wire.frame()
        assert answer["id"] == 2
        assert answer["error"]["code"] == -32602


async def test_cancelling_a_held_request_calls_its_hook_and_answers_it_cancelled() -> None:
    held = Held()
    async with raw_peer() as (conn, wire):
        conn.on_request("hold", msgspec.Raw, held)
        await wire.send_json(request(3, "hold"))
        await wire.ping()
        await wire.send_json(cancel(3))
        answer = await wire.frame()
        assert held.later is not None
        held.later.resolve("too late")  # answered already: ignored
        await wire.ping()
    assert answer["id"] == 3
    assert answer["error"]["code"] == -32800
    assert held.cancelled == 1


async def test_a_closing_connection_answers_its_held_requests_cancelled() -> None:
    held = Held()
    client_end, agent_end = memory_pair()
    async with (
        Connection(client_end, name="client") as client,
        Connection(agent_end, name="agent") as agent,
    ):
        agent.on_request("hold", msgspec.Raw, held)
        outcome: list[RequestError] = []

        async def call() -> None:
            with pytest.raises(RequestError) as caught:
                await client.request("hold", {}, dict)
            outcome.append(caught.value)

        with anyio.fail_after(TIMEOUT):
            async with anyio.create_task_group() as tg:
                tg.start_soon(call)
                await held.returned.wait()
                await agent.aclose()
    assert held.cancelled == 1
    assert [error.code for error in outcome] == [-32800]

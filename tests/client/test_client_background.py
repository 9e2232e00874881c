"""Background work from the client (RFD "v2 Background Work": D-13, PL-25, TC-13,
TM-10): ``state.background`` tracks the listed items, :func:`acp2.state.background_items`
resolves them, ``cancel_tool_call`` / ``cancel_terminal`` cancel one item, against the
test agent's ``background`` scenario in process."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from client_helpers import in_process

from acp2.errors import LocalProtocolError
from acp2.state import BackgroundItem, background_items
from helpers.timeouts import TIMEOUT

pytestmark = pytest.mark.anyio


async def _wait(session: Any, predicate: Any) -> None:
    """Wait (bounded) until ``predicate()`` holds, re-checked on every update."""
    changed = anyio.Event()
    remove = session.add_listener(lambda update, raw: changed.set())
    try:
        with anyio.fail_after(TIMEOUT):
            while not predicate():
                await changed.wait()
                changed = anyio.Event()
    finally:
        remove()


async def _started(client: Any) -> Any:
    session = await client.new_session()
    work = await session.prompt("background")
    with anyio.fail_after(TIMEOUT):
        assert await work.wait() == "end_turn"
    return session


async def test_the_idle_of_the_work_lists_its_background_items_and_they_resolve() -> None:
    async with in_process() as client:
        session = await _started(client)
        items = background_items(session.state)
        assert [(i.kind, i.title, i.cancellable) for i in items] == [
            ("tool_call", "Watch the tests", True),
            ("terminal", "make build", True),
        ]
        assert session.state.foreground == "idle"  # background work is not foreground


async def test_cancel_tool_call_ends_that_item_only_and_the_foreground_stays_idle() -> None:
    async with in_process() as client:
        session = await _started(client)
        call, term = background_items(session.state)
        completed = session.state.completed
        await session.cancel_tool_call(call.item_id)
        await _wait(session, lambda: len(session.state.background) == 1)
        assert session.state.tool_calls[call.item_id].status == "cancelled"
        assert background_items(session.state) == [
            BackgroundItem("terminal", term.item_id, "make build", True)
        ]
        assert session.state.completed == completed  # no work ended or started
        await session.cancel_terminal(term.item_id)
        await _wait(session, lambda: session.state.background == [])
        assert session.state.terminals[term.item_id].exited


async def test_cancelling_an_item_that_ended_or_never_existed_raises_locally() -> None:
    async with in_process() as client:
        session = await _started(client)
        call, _ = background_items(session.state)
        await session.cancel_tool_call(call.item_id)
        await _wait(session, lambda: session.state.tool_calls[call.item_id].finished)
        with pytest.raises(LocalProtocolError, match="cannot be cancelled"):
            await session.cancel_tool_call(call.item_id)
        with pytest.raises(LocalProtocolError, match="no tool call"):
            await session.cancel_tool_call("call_unknown")


async def test_session_cancel_leaves_background_items_running_d15() -> None:
    async with in_process() as client:
        session = await _started(client)
        work = await session.prompt("wait")
        await _wait(session, lambda: session.state.foreground == "running")
        await session.cancel()
        assert work.stop_reason == "cancelled"
        assert [i.kind for i in background_items(session.state)] == ["tool_call", "terminal"]
        statuses = {c.title: c.status for c in session.state.tool_calls.values()}
        assert statuses["Watch the tests"] == "in_progress"


async def test_background_items_that_end_on_their_own_leave_the_list() -> None:
    async with in_process() as client:
        session = await client.new_session()
        work = await session.prompt("background 0.05")
        with anyio.fail_after(TIMEOUT):
            await work.wait()
        await _wait(session, lambda: session.state.background == [])
        statuses = [c.status for c in session.state.tool_calls.values()]
        assert statuses == ["completed", "completed"]
        (term,) = session.state.terminals.values()
        assert term.exit_status.exit_code == 0
        assert term.text == "building...\n"

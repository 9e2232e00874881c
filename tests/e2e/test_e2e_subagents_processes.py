"""Subagents between two processes (Preview subagents, RFD session-replay-complete): the
test's acp2 client drives ``acp2 test-agent`` spawned over stdio, or ``acp2 serve
--test-agent`` over WebSocket and Streamable HTTP. The agent delegates to a child (task
and report as messages between the sessions), the client sees the child's own updates
and cancels a cancellable child; a later connection's resume replays the parent and the
child, each ended by exactly one ``replay_complete``."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp2.client import ClientConnection, ClientSession
from acp2.client.remote import connect_agent
from helpers.serve_process import serving
from helpers.timeouts import TIMEOUT

pytestmark = pytest.mark.anyio

#: How the client reaches the agent process.
OVER = ("stdio", "websocket", "http")


@pytest.fixture(params=OVER)
def over(request: pytest.FixtureRequest) -> str:
    way: str = request.param
    return way


@pytest.fixture
def reach(over: str, tmp_path: Path) -> Any:
    """``reach()``: a fresh connection to the same agent (its history in ``tmp_path``)."""
    store = str(tmp_path / "history.db")
    if over == "stdio":
        command = [sys.executable, "-m", "acp2", "test-agent", "--store", store]

        def stdio() -> Any:
            return connect_agent(command, cwd=str(tmp_path))

        yield stdio
        return
    with serving(tmp_path, "--test-agent", "--store", store) as port:
        url = f"http://127.0.0.1:{port}/acp"

        def remote() -> Any:
            return connect_agent([], url=url, cwd=str(tmp_path), transport=over)  # type: ignore[arg-type]

        yield remote


async def until(session: ClientSession, predicate: Any) -> None:
    while not predicate():
        await session._wait_change()


@asynccontextmanager
async def connected(reach: Any) -> AsyncIterator[ClientConnection]:
    with anyio.fail_after(TIMEOUT):
        async with reach() as client:
            yield client


def texts(session: ClientSession, kind: str) -> list[str]:
    return [m.text for (k, _), m in session.state.messages.items() if k == kind]


async def test_a_child_runs_and_a_resume_replays_parent_and_child_with_one_marker_each(
    reach: Any, tmp_path: Path
) -> None:
    async with connected(reach) as client:
        parent = await client.new_session(str(tmp_path))
        work = await parent.prompt("subagent found three pages")
        assert await work.wait() == "end_turn"
        assert work.text == "helper done"
        (child,) = parent.children.values()
        await until(child, lambda: len(texts(child, "session")) == 2)
        assert texts(child, "agent") == ["found three pages"]
        assert texts(child, "session") == ["found three pages", "reported: found three pages"]
        sid, child_id = parent.id, child.id
    async with connected(reach) as client:
        resumed = await client.resume(sid, cwd=str(tmp_path), replay=True)
        assert (resumed.state.replays, resumed.replay_truncated) == (1, False)
        again = resumed.children[child_id]
        # Over Streamable HTTP the child's replay comes on the child's own stream, which
        # the resume's answer may overtake: its marker (and the flag) may follow.
        await until(again, lambda: again.state.replays == 1 and not again.replay_truncated)
        assert (again.state.replays, again.replaying, again.replay_truncated) == (1, False, False)
        assert texts(again, "agent") == ["found three pages"]
        assert again.entry.title == "helper"
        assert not again.may_cancel  # the replayed child's work is gone
        assert texts(resumed, "session") == [
            "found three pages",
            "reported: found three pages",
        ]


async def test_the_client_cancels_a_cancellable_child_and_its_parent_goes_on(
    reach: Any, tmp_path: Path
) -> None:
    async with connected(reach) as client:
        parent = await client.new_session(str(tmp_path))
        work = await parent.prompt("subagent wait")
        await until(parent, lambda: bool(parent.children))
        (child,) = parent.children.values()
        await until(child, lambda: child.may_cancel and child.state.foreground == "running")
        await child.cancel()
        assert await work.wait() == "end_turn"
        assert work.text == "helper cancelled"
        await until(child, lambda: child.state.foreground == "idle")
        assert child.state.stop_reason == "cancelled"

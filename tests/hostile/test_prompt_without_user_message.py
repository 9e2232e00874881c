"""An agent that answers a prompt and writes its whole turn in one burst, without the user
message (or with the wrong one, or its idle before the answer): the work must still end.

The agent is a real subprocess (``burst_agent.py``) writing each turn in a single write,
so the client reads the response and the turn's updates in one chunk. Before the fix the
reader dispatched the whole chunk before the prompting task saw its answer: the work was
accepted after its own ``idle``, dropped it as earlier work, and ``wait()`` hung on a
session that had gone idle.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp2.client import connect
from acp2.errors import ConnectionClosed
from acp2.schema import AgentMessageChunk, StateUpdate
from helpers import timeouts
from helpers.processes import ACP2
from helpers.timeouts import PROCESS_TIMEOUT as TIMEOUT

pytestmark = pytest.mark.anyio

AGENT = [sys.executable, str(Path(__file__).with_name("burst_agent.py"))]

#: Modes whose turn ends with an idle the work must take.
ENDING = ["burst", "idle-first", "other-id", "no-running", "two-idles", "aug", "aug-user"]


def idles(items: list[Any]) -> int:
    return sum(1 for u in items if isinstance(u, StateUpdate) and u.state == "idle")


@pytest.mark.parametrize("mode", ENDING)
async def test_a_turn_written_in_one_burst_ends_the_work_with_its_idle(mode: str) -> None:
    """``wait()`` returns the turn's stop reason, ``async for`` ends with the one idle,
    and the work holds the turn's text."""
    with anyio.fail_after(TIMEOUT):
        async with connect(AGENT) as client:
            session = await client.new_session("/tmp")
            work = await session.prompt(mode)
            assert await work.wait() == "end_turn"
            items = [u async for u in work]
            assert idles(items) == 1
            assert items[-1].state == "idle"
            assert [u.content.text for u in items if isinstance(u, AgentMessageChunk)] == ["hi"]
            assert work.text == "hi"


async def test_a_repeated_idle_does_not_end_the_next_work() -> None:
    """The second idle of a burst is a snapshot: the next prompt's work gets its own idle
    and its own text, not the stale one."""
    with anyio.fail_after(TIMEOUT):
        async with connect(AGENT) as client:
            session = await client.new_session("/tmp")
            first = await session.prompt("two-idles")
            assert await first.wait() == "end_turn"
            second = await session.prompt("burst")
            assert await second.wait() == "end_turn"
            items = [u async for u in second]
            assert isinstance(items[0], StateUpdate)
            assert items[0].state == "running"
            assert idles(items) == 1
            assert second.text == "hi"
            assert session.state.messages[("agent", "a2")].text == "hi"


async def test_an_idle_for_another_session_leaves_the_work_running_until_a_bound() -> None:
    """The agent never reports our session idle: the work waits (the session is
    ``running``), a bounded wait raises ``TimeoutError``, and the agent going away ends
    every waiter with ``ConnectionClosed``."""
    with anyio.fail_after(TIMEOUT):
        async with connect(AGENT) as client:
            session = await client.new_session("/tmp")
            work = await session.prompt("other-session")
            with pytest.raises(TimeoutError):
                with anyio.fail_after(timeouts.QUIET_WAIT):
                    await work.wait()
            assert session.state.foreground == "running"
            assert not work.done
            await client.aclose()
            with pytest.raises(ConnectionClosed):
                async for _ in work:
                    pass
            with pytest.raises(ConnectionClosed):
                await work.wait()


@pytest.mark.parametrize("mode", ["burst", "idle-first", "no-running", "aug"])
def test_acp2_run_exits_after_a_turn_written_in_one_burst(mode: str, tmp_path: Path) -> None:
    """``acp2 run`` prints the reply and exits 0."""
    done = subprocess.run(
        [*ACP2, "run", "--timeout", "10", mode, "--", *AGENT],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=timeouts.RUN_TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "hi"


def test_acp2_run_gives_up_on_an_agent_that_never_reports_idle(tmp_path: Path) -> None:
    """An idle for another session is not ours: ``--timeout`` ends ``acp2 run`` (exit 3)
    with a clear error."""
    done = subprocess.run(
        [*ACP2, "run", "--timeout", "2", "other-session", "--", *AGENT],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=timeouts.RUN_TIMEOUT,
        check=False,
    )
    assert done.returncode == 3
    assert "no answer within 2 s" in done.stderr

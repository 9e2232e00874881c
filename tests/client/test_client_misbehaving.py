"""A dead or misbehaving agent gives a clear error and never hangs the client API.

Each test runs a real subprocess (``misbehaving_agent.py``) over stdio; every wait is
bounded by ``anyio.fail_after`` so a hang fails the test instead of stalling the run.
"""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest

from acp2.client import connect
from acp2.errors import ConnectionClosed
from helpers.timeouts import PROCESS_TIMEOUT, QUIET_WAIT

pytestmark = pytest.mark.anyio

SCRIPT = str(Path(__file__).with_name("misbehaving_agent.py"))


def broken(mode: str) -> list[str]:
    """The argv of the misbehaving agent in ``mode``."""
    return [sys.executable, SCRIPT, mode]


async def test_an_agent_that_crashes_at_start_fails_connect_with_its_stderr() -> None:
    """The stderr tail explains why the agent went away."""
    with anyio.fail_after(PROCESS_TIMEOUT):
        with pytest.raises(ConnectionClosed, match="OPENAI_API_KEY is not set"):
            async with connect(broken("crash-at-start")):
                pytest.fail("connected to a crashed agent")  # pragma: no cover


async def test_an_agent_printing_only_garbage_times_out_initialize_clearly() -> None:
    """Garbage on stdout is not an answer: initialize times out, naming stderr."""
    with anyio.fail_after(PROCESS_TIMEOUT):
        with pytest.raises(TimeoutError, match="garbage mode"):
            async with connect(broken("garbage-only"), initialize_timeout=1.0):
                pytest.fail("connected to a garbage agent")  # pragma: no cover


async def test_an_agent_exiting_mid_turn_fails_the_work_with_its_stderr() -> None:
    """Garbage then exit mid-turn: the work raises ConnectionClosed with the stderr tail,
    and the session refuses further prompts with the same error."""
    with anyio.fail_after(PROCESS_TIMEOUT):
        async with connect(broken("exit-mid-turn")) as client:
            session = await client.new_session()
            work = await session.prompt("hello")
            with pytest.raises(ConnectionClosed, match="model backend exploded"):
                await work.wait()
            with pytest.raises(ConnectionClosed):
                async for _update in work:
                    pass
            with pytest.raises(ConnectionClosed):
                await session.prompt("again")
            assert "model backend exploded" in client.stderr_tail()
            assert client.closed


async def test_an_agent_that_never_reports_idle_is_bounded_by_the_callers_timeout() -> None:
    """No idle ever: the caller's timeout fires, and leaving the connection stops the
    agent without hanging."""
    with anyio.fail_after(PROCESS_TIMEOUT):
        async with connect(broken("never-idle")) as client:
            session = await client.new_session()
            work = await session.prompt("hello")
            with pytest.raises(TimeoutError):
                with anyio.fail_after(QUIET_WAIT):
                    await work.wait()
            assert not work.done
            assert session.state.foreground == "running"

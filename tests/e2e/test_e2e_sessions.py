"""Session management end to end on every transport: list, resume with replay after the
agent restarted on the same SQLite file, close (SS-03, SS-12, SS-14, SS-18, SS-22)."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from functools import partial

import anyio
import pytest

from acp2.client import ClientConnection
from acp2.errors import LocalProtocolError
from helpers.timeouts import TIMEOUT

pytestmark = pytest.mark.anyio

Opener = partial[AbstractAsyncContextManager[ClientConnection]]


async def test_the_list_shows_every_session_with_its_cwd(link: ClientConnection) -> None:
    with anyio.fail_after(TIMEOUT):
        one = await link.new_session()
        two = await link.new_session()
        listed = {info.session_id: info.cwd for info in await link.list_sessions()}
    assert one.id != two.id
    assert listed == {one.id: link.default_cwd, two.id: link.default_cwd}


async def test_resume_after_a_restart_replays_the_history_and_the_session_goes_on(
    opener: Opener,
) -> None:
    """The agent is a new process (stdio) or a new Agent (memory) on the same file."""
    with anyio.fail_after(TIMEOUT):
        async with opener() as first:
            session = await first.new_session()
            for text in ("echo one", "echo two"):
                assert await (await session.prompt(text)).wait() == "end_turn"
        async with opener() as second:
            assert [i.session_id for i in await second.list_sessions()] == [session.id]
            resumed = await second.resume(session.id, replay=True)
            texts = [m.text for m in resumed.state.timeline if hasattr(m, "kind")]
            assert texts == ["echo one", "one", "echo two", "two"]
            assert resumed.state.foreground == "idle"
            work = await resumed.prompt("echo three")
            assert await work.wait() == "end_turn"
            assert work.text == "three"


async def test_a_closed_session_is_detached_and_refuses_prompts(link: ClientConnection) -> None:
    with anyio.fail_after(TIMEOUT):
        session = await link.new_session()
        await session.close()
        assert session.closed
        assert session.id not in link.sessions
        with pytest.raises(LocalProtocolError):
            await session.prompt("echo late")


async def test_closing_a_session_mid_turn_ends_its_work_cancelled(link: ClientConnection) -> None:
    with anyio.fail_after(TIMEOUT):
        session = await link.new_session()
        work = await session.prompt("wait")
        await session.close()
        assert work.done
        assert work.stop_reason == "cancelled"

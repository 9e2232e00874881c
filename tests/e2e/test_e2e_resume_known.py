"""Resuming a session the client saw part of, after its connection dropped mid-turn.

End to end on every transport (a new agent process on the same SQLite file over stdio):
the client passes the state it holds (``known=``), the acp2 agent replays the whole
history and sends ``replay_complete`` (RFD session-replay-complete), and the client ends
with every message once -- in ``state``, in what its listener is handed, and in the next
work's updates.
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from functools import partial
from typing import Any

import anyio
import pytest
from e2e_links import V1

from acp2.client import ClientConnection
from acp2.state import MessageState, entity_key
from helpers.timeouts import TIMEOUT

pytestmark = pytest.mark.anyio

Opener = partial[AbstractAsyncContextManager[ClientConnection]]


def _texts(state: Any) -> list[str]:
    return [e.text for e in state.timeline if isinstance(e, MessageState)]


@pytest.mark.not_over(
    V1, "known state and replay_complete are v2 only; v1 session/load cannot resume into held state"
)
async def test_resuming_into_the_state_held_before_the_drop_doubles_no_message(
    opener: Opener,
) -> None:
    with anyio.fail_after(TIMEOUT):
        async with opener() as first:
            session = await first.new_session()
            assert await (await session.prompt("echo one")).wait() == "end_turn"
            spoke = anyio.Event()
            session.add_listener(lambda update, raw: spoke.set() if update else None)
            waiting = await session.prompt("wait")  # still running when the link drops
            while len(_texts(session.state)) < 4:  # until the agent spoke in that turn
                await spoke.wait()
                spoke = anyio.Event()
        assert not waiting.done
        held = session.state
        before = _texts(held)
        assert before[:3] == ["echo one", "one", "wait"]
        assert len(before) == 4
        keys = set(held.messages)
        async with opener() as second:
            replayed: list[Any] = []

            def listener(update: Any, raw: bytes) -> None:
                if second.sessions[session.id].replaying:
                    replayed.append(update)

            resumed = await second.resume(session.id, replay=True, known=held, on_update=listener)
            assert resumed.state is held
            assert held.replays == 1
            assert _texts(held) == before
            assert not [u for u in replayed if entity_key(u) in keys]
            work = await resumed.prompt("echo three")
            assert await work.wait() == "end_turn"
            assert not {entity_key(u) for u in work.updates} & keys
            assert _texts(held) == [*before, "echo three", "three"]

"""Attack: every client watching a turn leaves in the same instant (issue 24).

A session several clients are attached to writes through a fan-out to all of them, which
skips a client whose connection is closed: the others still watch the turn. Before the
fix it skipped them all just as silently when every one was gone at once -- before any
of their connections had detached -- so a handler looping ``await turn.say(...)`` never
met backpressure again and ran on at full speed. Now a fan-out whose every connection is
closed reports it like a single client's would, and the turn is cancelled at that
``say``. Real connections over memory pairs, closed by their clients; the handler's loop
is bounded, so the old behaviour shows as a turn that ran to its end.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from acp2.agent.emitter import Emitter
from acp2.agent.fanout import Fanout
from acp2.agent.session import AgentSession
from acp2.lifecycle import CANCELLED
from acp2.rpc import Connection
from acp2.schema import AgentMessageChunk, TextContent
from acp2.transport.memory import memory_pair
from helpers.timeouts import TIMEOUT

pytestmark = pytest.mark.anyio

#: Far more chunks than the connections' buffers: a turn that gets here was never stopped.
CHUNKS = 200_000


async def test_a_turn_whose_clients_all_left_at_once_is_cancelled_at_its_next_say(
    tmp_path: Path,
) -> None:
    (owner, agent_a), (watcher, agent_b) = memory_pair(), memory_pair()
    async with (
        Connection(agent_a, name="owner") as to_owner,
        Connection(agent_b, name="watcher") as to_watcher,
    ):
        emitter = Emitter("sess_1", Fanout([to_owner, to_watcher]), None)
        session = AgentSession("sess_1", str(tmp_path), [], [], emitter)
        await owner.aclose()
        await watcher.aclose()
        with anyio.fail_after(TIMEOUT):
            await to_owner.wait_closed()
            await to_watcher.wait_closed()
        sent = 0

        async def stream() -> str:
            nonlocal sent
            for sent in range(CHUNKS):
                text = TextContent(text=f"{sent} ")
                await session.send(AgentMessageChunk(message_id="m", content=text))
            return "end_turn"

        await session.acquire()
        session.report("start")
        reason, failure = await session.run_work(stream)
    assert (reason, failure) == (CANCELLED, None)
    assert sent == 0  # the first chunk found every client gone

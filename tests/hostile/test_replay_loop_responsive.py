"""Attack: a long session freezes the agent while it is resumed (issue 10, section 8).

Resuming a session of a million chunks folded the whole history in one go on the event
loop: ~2-7 s in which the agent answered nothing (bench/replay_long.py: the longest loop
stall of a 1M-chunk resume was 2.1-6.1 s before, under 0.1 s after). The history is now
read a batch at a time in a worker thread and folded in slices that yield to the loop,
so another request on the same connection is answered while the replay is being built.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from hostile.store_helpers import TIMEOUT, agent_argv, raw_agent, seed_message

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


async def test_a_request_sent_after_a_long_resume_is_answered_before_the_resume(
    tmp_path: Path,
) -> None:
    store = tmp_path / "history.sqlite3"
    sid = seed_message(store, tmp_path, ["word "] * 300_000)
    params = {"sessionId": sid, "cwd": str(tmp_path), "replayFrom": {"type": "start"}}
    order: list[str] = []

    async def call(method: str, body: object) -> None:
        await agent.call(method, body)
        order.append(method)

    with anyio.fail_after(TIMEOUT):
        async with raw_agent(agent_argv(store)) as agent, anyio.create_task_group() as tg:
            tg.start_soon(call, "session/resume", params)
            await anyio.sleep(0.05)  # let the resume request go out first
            tg.start_soon(call, "session/list", {})
    assert order == ["session/list", "session/resume"]
    texts = [u["content"]["text"] for u in agent.updates() if "chunk" in u["sessionUpdate"]]
    assert sum(len(t) for t in texts) > 1_000_000  # the replay itself was complete

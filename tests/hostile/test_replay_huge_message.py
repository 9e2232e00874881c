"""Attack: replaying a message too big for one frame (issue 10, section 8).

A message streamed as 2.5M chunks replayed as one 74-84 MB ``agent_message`` frame; the
TypeScript SDK refuses messages over 32 MiB and acp2's own client dropped it as oversized
("0 chars after resume"). Replay now splits an entity over 1 MiB into a whole update and
chunks with the same ``messageId``: every frame stays under 2 MiB (16x under the TS
limit) and acp2's client rebuilds the exact text. (bench/replay_long.py measures the
2.5M-chunk case: 73.9 MiB biggest frame before, 0.25 MiB after.)
"""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from acp2.client import connect
from hostile.store_helpers import TIMEOUT, agent_argv, raw_agent, seed_message

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

#: Well under the TypeScript SDK's 32 MiB message limit.
FRAME_LIMIT = 2 * 1024 * 1024


def _chunks() -> list[str]:
    """A 40 MiB message: 40 960 chunks of 1 KiB (quotes and newlines to escape included)."""
    piece = ('a "quoted" line\n' * 64)[:1024]
    return [piece] * 40_960


async def test_a_40_mib_message_replays_in_frames_under_2_mib_with_one_message_id(
    tmp_path: Path,
) -> None:
    store = tmp_path / "history.sqlite3"
    chunks = _chunks()
    sid = seed_message(store, tmp_path, chunks)
    params = {"sessionId": sid, "cwd": str(tmp_path), "replayFrom": {"type": "start"}}
    with anyio.fail_after(TIMEOUT):
        async with raw_agent(agent_argv(store)) as agent:
            await agent.call("session/resume", params)
    assert max(agent.sizes) < FRAME_LIMIT
    kinds = {"agent_message", "agent_message_chunk"}
    replayed = [u for u in agent.updates() if u["sessionUpdate"] in kinds]
    assert replayed[0]["sessionUpdate"] == "agent_message"
    assert {u["sessionUpdate"] for u in replayed[1:]} == {"agent_message_chunk"}
    assert {u["messageId"] for u in replayed} == {"agent_long"}
    blocks = [replayed[0]["content"][0]] + [u["content"] for u in replayed[1:]]
    assert "".join(b["text"] for b in blocks) == "".join(chunks)


async def test_acp2s_own_client_rebuilds_the_exact_text_of_a_split_replay(tmp_path: Path) -> None:
    store = tmp_path / "history.sqlite3"
    chunks = [f"wörd{i % 10}\t" for i in range(200_000)]  # 1.4 MB: over the budget
    sid = seed_message(store, tmp_path, chunks)
    with anyio.fail_after(TIMEOUT):
        async with connect(agent_argv(store), cwd=tmp_path) as client:
            session = await client.resume(sid, replay=True)
    (message,) = session.state.messages.values()
    assert message.message_id == "agent_long"
    assert message.text == "".join(chunks)

"""The front bridge keeps updates of sessions the v1 client has not seen opened, bounded
(a child session's never open for v1: they must not grow memory without end)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from acp2.bridge.front import MAX_UNOPENED_SESSIONS, MAX_UNOPENED_UPDATES, FrontBridge
from acp2.rpc import Connection
from acp2.schema import UpdateSessionNotification
from acp2.schema.codec import decode
from acp2.transport.memory import memory_pair
from helpers.timeouts import TIMEOUT

pytestmark = pytest.mark.anyio


def note(session_id: str, n: int) -> Any:
    raw = (
        b'{"sessionId":"%s","update":{"sessionUpdate":"agent_message_chunk",'
        b'"messageId":"m","content":{"type":"text","text":"%d"}}}' % (session_id.encode(), n)
    )
    return decode(raw, UpdateSessionNotification)


async def test_updates_of_unopened_sessions_are_bounded_and_the_rest_counted() -> None:
    a, b = memory_pair()
    c, d = memory_pair()
    with anyio.fail_after(TIMEOUT):
        async with Connection(a) as v1, Connection(c) as v2, anyio.create_task_group() as tg:
            bridge = FrontBridge(v1, v2, tg)
            for n in range(MAX_UNOPENED_UPDATES + 10):
                bridge.on_update(note("child", n))
            for k in range(MAX_UNOPENED_SESSIONS):
                bridge.on_update(note(f"other{k}", 0))
            held = bridge._unopened
            assert len(held) == MAX_UNOPENED_SESSIONS
            assert "child" not in held  # the oldest id went
            # the child: 10 over its bound, then its 256 when its id went
            assert bridge.dropped()["unopened_session_update"] == MAX_UNOPENED_UPDATES + 10
            tg.cancel_scope.cancel()
    for t in (b, d):
        await t.aclose()

"""Fault test of the durable WebSocket link: a client streaming 10 000 updates through a TCP
proxy that cuts the connection 20 times at random points (tests/helpers/cutproxy.py) ends
with exactly the updates in order, no duplicates, and the work's single idle. The server is
the durable test server (tests/helpers/durable_ws.py); the issue's 100 000 / 100-cut
version runs against ``acp2 serve``."""

from __future__ import annotations

import random
from typing import Any

import anyio
import pytest

from acp2.client import connect_url
from acp2.schema import AgentMessageChunk, StateUpdate
from acp2.transport.backoff import Backoff
from helpers.cutproxy import CutProxy, cut_proxy
from helpers.durable_ws import durable_ws_server
from helpers.timeouts import SCENARIO_TIMEOUT

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

CWD = "/tmp/acp2-client-tests"
UPDATES = 10_000
CUTS = 20


async def cut_randomly(proxy: CutProxy, rng: random.Random, cuts: int) -> None:
    """Cut ``cuts`` times, each after a random amount of the stream got through."""
    while proxy.cuts < cuts:
        await proxy.forwarded_at_least(proxy.forwarded + rng.randint(1, 20_000))
        proxy.cut()


async def test_ten_thousand_updates_survive_twenty_random_cuts_exactly_once() -> None:
    texts: list[str] = []
    idles = 0

    def listen(update: Any, raw: bytes) -> None:
        nonlocal idles
        if isinstance(update, AgentMessageChunk):
            texts.append(update.content.text)
        elif isinstance(update, StateUpdate) and update.state == "idle":
            idles += 1

    rng = random.Random(15)
    backoff = Backoff(initial=0.005, max_delay=0.1, max_attempts=100, max_elapsed=30)
    with anyio.fail_after(SCENARIO_TIMEOUT * 4):
        async with durable_ws_server() as server:
            port = int(server.url.rsplit(":", 1)[1].split("/")[0])
            async with (
                cut_proxy(port) as proxy,
                connect_url(
                    f"ws://127.0.0.1:{proxy.port}/acp", cwd=CWD, reconnect=backoff
                ) as client,
                anyio.create_task_group() as tg,
            ):
                session = await client.new_session(on_update=listen)
                tg.start_soon(cut_randomly, proxy, rng, CUTS)
                work = await session.prompt(f"stream {UPDATES}")
                assert await work.wait() == "end_turn"
                tg.cancel_scope.cancel()
    assert "".join(texts) == "".join(f"{i} " for i in range(UPDATES))
    assert idles == 1
    assert proxy.cuts == CUTS

"""Bench driver on the official Python SDK (``agent-client-protocol==0.12.1``, ACP v1).

Runs in the SDK's own venv. It spawns ``sdk_agent.py`` with ``acp.spawn_agent_process``
and drives one scenario (``stream``, ``rtt``, ``replay``, ``sessions``) with a ``Client``
class written the SDK's way, then prints one ``BENCH-RESULT`` line.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import acp  # type: ignore[import-not-found,unused-ignore]
from acp.schema import TextContentBlock  # type: ignore[import-not-found,unused-ignore]

from _common import (
    SESSION_CWD,
    cpu_seconds,
    latency_metrics,
    maxrss_kib,
    rss_kib,
    self_stats,
    stream_metrics,
    stream_prompt,
)
from _drivers import Scenario, driver_main, limited, timed

AGENT = Path(__file__).with_name("sdk_agent.py")


class BenchClient:
    """A v1 client that reduces every update into per-message text lists."""

    def __init__(self) -> None:
        self.received = 0
        self.messages: dict[tuple[str, str], list[str]] = {}
        self.target = 0
        self.reached = asyncio.Event()

    def expect(self, total: int) -> None:
        """Set ``reached`` once ``received`` gets to ``total``."""
        self.target = total
        self.reached.clear()
        if self.received >= total:
            self.reached.set()

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        """Append the update's text to its message (the client's session state)."""
        self.received += 1
        key = (session_id, getattr(update, "message_id", None) or "")
        self.messages.setdefault(key, []).append(getattr(update.content, "text", ""))
        if self.received >= self.target:
            self.reached.set()

    async def request_permission(self, *args: Any, **kwargs: Any) -> Any:
        """The bench agent never asks."""
        raise acp.RequestError.method_not_found("session/request_permission")

    def on_connect(self, conn: Any) -> None:
        """Nothing to set up."""


@asynccontextmanager
async def connected(client: BenchClient) -> AsyncIterator[Any]:
    """Spawn the bench agent, initialize, and yield the client-side connection."""
    async with acp.spawn_agent_process(
        lambda _agent: client,
        sys.executable,
        str(AGENT),
        transport_kwargs={"stderr": None},
    ) as (conn, _proc):
        await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
        yield conn


def prompt_blocks(n: int) -> list[Any]:
    """Return the prompt content asking for ``n`` streamed chunks."""
    return [TextContentBlock(type="text", text=stream_prompt(n))]


async def stream(args: argparse.Namespace) -> dict[str, Any]:
    """Time one prompt that streams ``args.updates`` chunks; CPU and RSS of both sides."""
    client = BenchClient()
    async with connected(client) as conn:
        session_id = (await conn.new_session(cwd=SESSION_CWD)).session_id
        await conn.prompt(session_id=session_id, prompt=prompt_blocks(10))
        agent0 = await conn.ext_method("bench/stats", {})
        cpu0 = cpu_seconds()
        t0 = time.perf_counter()
        await conn.prompt(session_id=session_id, prompt=prompt_blocks(args.updates))
        seconds = time.perf_counter() - t0
        own = {"cpu_s": cpu_seconds() - cpu0, "maxrss_kib": maxrss_kib()}
        agent1 = await conn.ext_method("bench/stats", {})
    if client.received != args.updates + 10:
        raise RuntimeError(f"received {client.received} updates, expected {args.updates + 10}")
    agent = {"cpu_s": agent1["cpu_s"] - agent0["cpu_s"], "maxrss_kib": agent1["maxrss_kib"]}
    return stream_metrics(args.updates, seconds, own, agent)


async def rtt(args: argparse.Namespace) -> dict[str, Any]:
    """p50/p99 of ``_bench/ping`` and of a prompt whose turn ends at once."""
    client = BenchClient()
    async with connected(client) as conn:
        session_id = (await conn.new_session(cwd=SESSION_CWD)).session_id
        pings = await timed(args.pings, args.warmup, lambda: conn.ext_method("bench/ping", {}))
        blocks = prompt_blocks(0)
        prompts = await timed(
            args.prompts,
            args.warmup,
            lambda: conn.prompt(session_id=session_id, prompt=blocks),
        )
    return {**latency_metrics("ping", pings), **latency_metrics("prompt", prompts)}


async def replay(args: argparse.Namespace) -> dict[str, Any]:
    """Seconds until ``session/load`` answers after replaying a stored conversation."""
    client = BenchClient()
    async with connected(client) as conn:
        session_id = (await conn.new_session(cwd=SESSION_CWD)).session_id
        await conn.ext_method("bench/seed", {"sessionId": session_id, "count": args.replay})
        rss0 = self_stats(collect=True)["rss_kib"]
        client.expect(args.replay)
        t0 = time.perf_counter()
        await conn.load_session(cwd=SESSION_CWD, session_id=session_id)
        seconds = time.perf_counter() - t0
        await asyncio.wait_for(client.reached.wait(), 60)
        all_in = time.perf_counter() - t0
    return {
        "updates": args.replay,
        "seconds": seconds,
        "seconds_all_applied": all_in,
        "client_maxrss_mib": maxrss_kib() / 1024,
        "client_rss_growth_mib": (rss_kib() - rss0) / 1024,
    }


async def sessions(args: argparse.Namespace) -> dict[str, Any]:
    """Open ``args.sessions`` sessions on one connection, one short turn each."""
    client = BenchClient()
    async with connected(client) as conn:
        agent0 = await conn.ext_method("bench/stats", {"gc": True})
        own0 = self_stats(collect=True)
        t0 = time.perf_counter()
        created = await limited(
            args.window, args.sessions, lambda _i: conn.new_session(cwd=SESSION_CWD)
        )
        ids = [response.session_id for response in created]
        blocks = prompt_blocks(1)
        await limited(
            args.window, len(ids), lambda i: conn.prompt(session_id=ids[i], prompt=blocks)
        )
        seconds = time.perf_counter() - t0
        own1 = self_stats(collect=True)
        agent1 = await conn.ext_method("bench/stats", {"gc": True})
    n = args.sessions
    return {
        "sessions": n,
        "seconds": seconds,
        "agent_kib_per_session": (agent1["rss_kib"] - agent0["rss_kib"]) / n,
        "client_kib_per_session": (own1["rss_kib"] - own0["rss_kib"]) / n,
    }


SCENARIOS: dict[str, Scenario] = {
    "stream": stream,
    "rtt": rtt,
    "replay": replay,
    "sessions": sessions,
}


def main() -> None:
    """Command line: ``sdk_client.py SCENARIO [sizes]``."""
    driver_main(__doc__, SCENARIOS)


if __name__ == "__main__":
    main()

"""Bench driver on the official Python SDK 1.0.0rc3 (``acp.experimental.v2``, ACP v2).

Runs in the SDK's own venv. It spawns ``sdk2_agent.py`` over asyncio pipes, connects a
``ClientSideConnection`` whose ``session_update`` handler reduces every update into
per-session state (text per message, the session's state), drives one scenario
(``stream``, ``rtt``, ``replay``, ``sessions``) and prints one ``BENCH-RESULT`` line.
A prompt counts as done when its turn's ``idle`` update arrives (as for acp2 and the
TypeScript SDK), not when the ``{messageId}`` response does.
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

from acp.experimental.v2 import (  # type: ignore[import-not-found,unused-ignore]
    PROTOCOL_VERSION,
    ClientSideConnection,
    schema,
)

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

AGENT = Path(__file__).with_name("sdk2_agent.py")


class Session:
    """One session's state as the client reduces it."""

    __slots__ = ("idle", "messages", "state")

    def __init__(self) -> None:
        self.messages: dict[str, list[str]] = {}
        self.state = "idle"
        self.idle: asyncio.Future[None] | None = None


class BenchClient:
    """A v2 client reducing every update; it wakes whoever waits for a session's idle."""

    def __init__(self) -> None:
        self.received = 0
        self.sessions: dict[str, Session] = {}
        self.target = 0
        self.reached = asyncio.Event()

    def session(self, session_id: str) -> Session:
        """Return the state of ``session_id`` (created on first use)."""
        found = self.sessions.get(session_id)
        if found is None:
            found = self.sessions[session_id] = Session()
        return found

    def expect(self, total: int) -> None:
        """Set ``reached`` once ``received`` gets to ``total``."""
        self.target = total
        self.reached.clear()
        if self.received >= total:
            self.reached.set()

    def next_idle(self, session_id: str) -> asyncio.Future[None]:
        """Return a future resolved by the session's next ``idle`` update."""
        future = asyncio.get_running_loop().create_future()
        self.session(session_id).idle = future
        return future

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        """Reduce one update into the session's state."""
        self.received += 1
        session = self.session(session_id)
        kind = update.session_update
        if kind in ("agent_message_chunk", "user_message_chunk"):
            parts = session.messages.setdefault(update.message_id, [])
            parts.append(getattr(update.content, "text", ""))
        elif kind in ("agent_message", "user_message"):
            texts = [getattr(block, "text", "") for block in update.content or []]
            session.messages[update.message_id] = texts
        elif kind == "state_update":
            session.state = update.state
            if update.state == "idle" and session.idle is not None:
                if not session.idle.done():
                    session.idle.set_result(None)
                session.idle = None
        if self.received >= self.target:
            self.reached.set()

    async def request_permission(self, *args: Any, **kwargs: Any) -> Any:
        """The bench agent never asks."""
        raise RuntimeError("the bench agent asked for a permission")


@asynccontextmanager
async def connected(client: BenchClient) -> AsyncIterator[Any]:
    """Spawn the bench agent, initialize, and yield the client-side connection."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        str(AGENT),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        limit=2**26,
    )
    conn = ClientSideConnection(client, process.stdin, process.stdout)
    try:
        info = schema.Implementation(name="acp2-bench-py-sdk2-client", version="0")
        await conn.initialize(protocol_version=PROTOCOL_VERSION, info=info)
        yield conn
    finally:
        await conn.close()
        assert process.stdin is not None
        process.stdin.close()
        try:
            await asyncio.wait_for(process.wait(), 5)
        except TimeoutError:
            process.kill()
            await process.wait()


def prompt_blocks(n: int) -> list[Any]:
    """Return the prompt content asking for ``n`` streamed chunks."""
    return [schema.TextContentBlock(type="text", text=stream_prompt(n))]


async def turn(conn: Any, client: BenchClient, session_id: str, blocks: list[Any]) -> None:
    """Send a prompt and wait for its turn's ``idle`` update."""
    idle = client.next_idle(session_id)
    await conn.prompt(session_id=session_id, prompt=blocks)
    await idle


async def new_session(conn: Any) -> str:
    """Open a session in the bench cwd; return its id."""
    return str((await conn.new_session(cwd=SESSION_CWD)).session_id)


async def stats(conn: Any, collect: bool = False) -> dict[str, Any]:
    """Return the agent's ``_bench/stats``."""
    found: dict[str, Any] = await conn.send_extension_request("_bench/stats", {"gc": collect})
    return found


async def stream(args: argparse.Namespace) -> dict[str, Any]:
    """Time one prompt that streams ``args.updates`` chunks; CPU and RSS of both sides."""
    client = BenchClient()
    async with connected(client) as conn:
        session_id = await new_session(conn)
        await turn(conn, client, session_id, prompt_blocks(10))
        agent0 = await stats(conn)
        cpu0 = cpu_seconds()
        t0 = time.perf_counter()
        await turn(conn, client, session_id, prompt_blocks(args.updates))
        seconds = time.perf_counter() - t0
        own = {"cpu_s": cpu_seconds() - cpu0, "maxrss_kib": maxrss_kib()}
        agent1 = await stats(conn)
    streamed = sum(len(p) for p in client.session(session_id).messages.values())
    if streamed < args.updates:
        raise RuntimeError(f"reduced {streamed} chunks, expected at least {args.updates}")
    agent = {"cpu_s": agent1["cpu_s"] - agent0["cpu_s"], "maxrss_kib": agent1["maxrss_kib"]}
    return stream_metrics(args.updates, seconds, own, agent)


async def rtt(args: argparse.Namespace) -> dict[str, Any]:
    """p50/p99 of ``_bench/ping`` and of a prompt whose turn ends at once (-> idle)."""
    client = BenchClient()
    async with connected(client) as conn:
        session_id = await new_session(conn)
        pings = await timed(
            args.pings, args.warmup, lambda: conn.send_extension_request("_bench/ping", {})
        )
        blocks = prompt_blocks(0)
        prompts = await timed(
            args.prompts, args.warmup, lambda: turn(conn, client, session_id, blocks)
        )
    return {**latency_metrics("ping", pings), **latency_metrics("prompt", prompts)}


async def replay(args: argparse.Namespace) -> dict[str, Any]:
    """Seconds until ``session/resume`` (full replay) answers, and until all is applied."""
    client = BenchClient()
    async with connected(client) as conn:
        session_id = await new_session(conn)
        seed = {"sessionId": session_id, "count": args.replay}
        await conn.send_extension_request("_bench/seed", seed)
        rss0 = self_stats(collect=True)["rss_kib"]
        client.expect(client.received + args.replay + 1)  # the replay and the snapshot
        t0 = time.perf_counter()
        start = schema.ReplayFromStartVariant(type="start")
        await conn.resume_session(session_id=session_id, cwd=SESSION_CWD, replay_from=start)
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
        agent0 = await stats(conn, collect=True)
        own0 = self_stats(collect=True)
        t0 = time.perf_counter()
        ids = await limited(args.window, args.sessions, lambda _i: new_session(conn))
        blocks = prompt_blocks(1)
        await limited(args.window, len(ids), lambda i: turn(conn, client, ids[i], blocks))
        seconds = time.perf_counter() - t0
        own1 = self_stats(collect=True)
        agent1 = await stats(conn, collect=True)
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
    """Command line: ``sdk2_client.py SCENARIO [sizes]``."""
    driver_main(__doc__, SCENARIOS)


if __name__ == "__main__":
    main()

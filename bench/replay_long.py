"""Long sessions: resume with replay of one huge streamed message (issue 10, section 8).

A session whose history is one agent message of ``--chunks`` ``agent_message_chunk``
updates (stored the way a streaming agent stores them: one row per flush of
``--per-flush`` chunks) is resumed with ``replayFrom: start`` by an agent served in this
process over a memory pair. The client side is a raw line reader (it decodes nothing but
the responses), so the figures are the agent's:

* ``max_frame_mib`` -- the biggest frame the replay sent (the TypeScript SDK refuses
  messages over 32 MiB);
* ``max_loop_gap_ms`` -- the longest the event loop went without running a 1 ms ticker
  task during the resume (how long the agent could not answer anything);
* ``list_answered_s`` -- when a ``session/list`` sent right after the resume request was
  answered, against ``resume_s`` -- when the resume was (a responsive loop answers the
  list first).

Run: ``.venv/bin/python bench/replay_long.py --chunks 1000000`` (and ``--chunks 2500000``).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

SESSION_ID = "sess_long"
CWD = "/tmp"


def seed(path: Path, chunks: int, per_flush: int) -> None:
    """Store one agent message of ``chunks`` chunks in a fresh history file."""
    from acp2.agent import HistoryStore
    from acp2.schema import AgentMessageChunk, TextContent
    from acp2.schema.codec import encode

    store = HistoryStore(path)
    store.create_session(SESSION_ID, CWD, [])
    body = encode(AgentMessageChunk(message_id="agent_1", content=TextContent(text="word ")))
    for start in range(0, chunks, per_flush):
        for _ in range(min(per_flush, chunks - start)):
            store.append(SESSION_ID, body)
        store.flush()
    store.close()


class _Reader:
    """Splits the agent's output into lines; records sizes and the two responses."""

    def __init__(self) -> None:
        self.buffer = bytearray()
        self.max_frame = 0
        self.frames = 0
        self.answered: dict[int, float] = {}

    def feed(self, data: bytes, now: float) -> None:
        self.buffer += data
        while (end := self.buffer.find(b"\n")) >= 0:
            line = bytes(self.buffer[:end])
            del self.buffer[: end + 1]
            self.frames += 1
            self.max_frame = max(self.max_frame, len(line))
            if line.startswith(b'{"jsonrpc":"2.0","id":') or b'"method"' not in line[:200]:
                message = json.loads(line)
                if "id" in message and "method" not in message:
                    if "error" in message:
                        raise RuntimeError(f"request {message['id']} failed: {message['error']}")
                    self.answered[int(message["id"])] = now


async def measure(path: Path) -> dict[str, Any]:
    """Resume the stored session with replay and return the figures."""
    from acp2.agent import Agent
    from acp2.transport.memory import memory_pair

    agent = Agent(name="bench-long", store=str(path))
    ours, theirs = memory_pair()
    reader = _Reader()
    gaps = [0.0]

    async def tick(stop: anyio.Event) -> None:
        last = time.perf_counter()
        while not stop.is_set():
            await anyio.sleep(0.001)
            now = time.perf_counter()
            gaps[0] = max(gaps[0], now - last)
            last = now

    async def read(t0: float) -> None:
        while 2 not in reader.answered or 3 not in reader.answered:
            data = await ours.receive()
            if not data:
                raise RuntimeError("the agent closed the connection")
            reader.feed(data, time.perf_counter() - t0)

    def send(req_id: int, method: str, params: Any) -> bytes:
        frame = {"jsonrpc": "2.0", "id": req_id, "method": method, "params": params}
        return json.dumps(frame).encode() + b"\n"

    async with anyio.create_task_group() as tg:
        tg.start_soon(agent.serve, theirs)
        await ours.send(
            send(1, "initialize", {"protocolVersion": 2, "info": {"name": "bench", "version": "1"}})
        )
        while 1 not in reader.answered:
            reader.feed(await ours.receive(), 0.0)
        stop = anyio.Event()
        tg.start_soon(tick, stop)
        await anyio.sleep(0.05)
        gaps[0] = 0.0
        t0 = time.perf_counter()
        resume = {"sessionId": SESSION_ID, "cwd": CWD, "replayFrom": {"type": "start"}}
        await ours.send(send(2, "session/resume", resume))
        await ours.send(send(3, "session/list", {}))
        await read(t0)
        stop.set()
        await ours.aclose()
        tg.cancel_scope.cancel()
    return {
        "frames": reader.frames,
        "max_frame_mib": round(reader.max_frame / 2**20, 3),
        "max_loop_gap_ms": round(gaps[0] * 1000, 1),
        "resume_s": round(reader.answered[2], 3),
        "list_answered_s": round(reader.answered[3], 3),
    }


def main() -> None:
    """Command line: ``--chunks N --per-flush M``; prints one JSON object."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--chunks", type=int, default=1_000_000)
    parser.add_argument("--per-flush", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="acp2-bench-long-") as tmp:
        path = Path(tmp) / "history.sqlite3"
        t0 = time.perf_counter()
        seed(path, args.chunks, args.per_flush)
        seeded = time.perf_counter() - t0
        result = anyio.run(measure, path)
    result = {"chunks": args.chunks, "seed_s": round(seeded, 2), **result}
    json.dump(result, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()

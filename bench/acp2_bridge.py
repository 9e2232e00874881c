"""acp2's v1 bridges: what each adds to a prompt round trip and to a streamed update.

Four peerings, each against its same-run baseline (the same agent spoken to directly):

* **front** (an acp2 agent serving a v1 client through ``acp2.bridge.front``): a raw v1
  client (below) -> ``acp2_agent.py`` over stdio, against acp2's v2 client -> the same
  agent. Round trip: v1 ``session/prompt`` -> its response; v2 prompt -> ``idle``.
* **back** (acp2's client driving a v1 agent through ``acp2.bridge.back``): acp2's client
  -> a raw v1 agent (``--agent 1``, below), against acp2's client -> the raw v2 agent
  doing the same (``--agent 2``); also shown (``back_alt``): a raw v1 client -> the raw
  v1 agent. Round trip: prompt -> ``idle`` (the client's ``Work.wait``).

For each: the prompt round trip p50 (``stream 0``) and the CPU µs per streamed
``agent_message_chunk`` of both processes together (each side's own ``getrusage`` for
the driver, ``/proc/<pid>/stat`` for the spawned peer, inside the measured window).
The bridged and direct peerings alternate ``--runs`` times (fresh processes each); the
result holds the medians, the bridged - direct delta (µs) and bridged / direct ratio.
The raw peers do what a minimal v1 peer must: split lines, parse each with orjson (or
msgspec), answer; the raw client checks the streamed text's length.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import Any

from _acp2 import agent_argv, require, size_arguments
from _common import (
    BENCH_SESSION_ID,
    SESSION_CWD,
    chunk_text,
    cpu_seconds,
    emit_result,
    parse_stream_prompt,
    percentile,
    stream_prompt,
)
from _drivers import timed
from raw_stream import json_dumps, json_loads

NEEDS = ("acp2.agent", "acp2.client", "acp2.bridge.front", "acp2.bridge.back")
_TICK = os.sysconf("SC_CLK_TCK")

Measure = Callable[[list[str]], Awaitable[dict[str, float]]]


def proc_cpu_s(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far (``/proc/<pid>/stat``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICK


def child_pid() -> int:
    """The pid of this process's one child (the agent ``acp2.client.connect`` spawned)."""
    kids = [
        int(pid)
        for task in Path("/proc/self/task").iterdir()
        for pid in (task / "children").read_text().split()
    ]
    if len(kids) != 1:
        raise RuntimeError(f"expected one child process, found {kids}")
    return kids[0]


# -- the raw v1 peers ----------------------------------------------------------------------


class Lines:
    """Split a byte stream into lines and hand each parsed message to ``on_message``."""

    def __init__(self, on_message: Callable[[Any], None]) -> None:
        self._on_message = on_message
        self._loads = json_loads()[1]
        self._rest = b""

    def feed(self, data: bytes) -> None:
        """Parse every complete line in ``data``."""
        lines = (self._rest + data).split(b"\n")
        self._rest = lines.pop()
        for line in lines:
            self._on_message(self._loads(line))


class RawClient(asyncio.SubprocessProtocol):
    """A minimal client over a child's pipes, v1 or v2 (``version``): one request at a
    time, streamed text counted; a v2 prompt waits for its ``idle``."""

    def __init__(self, version: int) -> None:
        self.version = version
        self._lines = Lines(self._on_message)
        self._dumps = json_dumps()
        self._next_id = 0
        self._waiting: dict[int, asyncio.Future[Any]] = {}
        self._idle: asyncio.Future[str] | None = None
        self.stdin: asyncio.WriteTransport | None = None
        self.text_chars = 0
        self.exited: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        """Read the agent's stdout."""
        if fd == 1:
            self._lines.feed(data)

    def _on_message(self, message: Any) -> None:
        if "method" not in message:
            self._waiting.pop(message["id"]).set_result(message)
        elif message["method"] == "session/update":
            update = message["params"]["update"]
            kind = update["sessionUpdate"]
            if kind == "agent_message_chunk":
                self.text_chars += len(update["content"]["text"])
            elif kind == "state_update" and update["state"] == "idle" and self._idle:
                self._idle.set_result(update["stopReason"])

    def process_exited(self) -> None:
        """Mark the agent gone."""
        if not self.exited.done():
            self.exited.set_result(None)

    async def request(self, method: str, params: Any) -> Any:
        """Send one request; its result (raises on an error answer)."""
        assert self.stdin is not None
        rid = self._next_id = self._next_id + 1
        future = self._waiting[rid] = asyncio.get_running_loop().create_future()
        frame = {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}
        self.stdin.write(self._dumps(frame) + b"\n")
        answer = await future
        if "error" in answer:
            raise RuntimeError(f"{method} failed: {answer['error']}")
        return answer["result"]

    async def handshake(self) -> str:
        """``initialize`` and ``session/new`` in this client's version; the session id."""
        if self.version == 1:
            await self.request("initialize", V1_INITIALIZE)
            params: dict[str, Any] = {"cwd": SESSION_CWD, "mcpServers": []}
        else:
            await self.request("initialize", V2_INITIALIZE)
            params = {"cwd": SESSION_CWD}
        return str((await self.request("session/new", params))["sessionId"])

    async def prompt(self, session_id: str, text: str) -> str:
        """A prompt until its turn ended (v1: the response; v2: ``idle``); the stop reason."""
        params = {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}
        if self.version == 1:
            return str((await self.request("session/prompt", params))["stopReason"])
        idle = self._idle = asyncio.get_running_loop().create_future()
        await self.request("session/prompt", params)
        return await idle


V1_INITIALIZE = {
    "protocolVersion": 1,
    "clientCapabilities": {"fs": {"readTextFile": False, "writeTextFile": False}},
    "clientInfo": {"name": "acp2-bench-v1-client", "version": "0"},
}
V2_INITIALIZE = {
    "protocolVersion": 2,
    "info": {"name": "acp2-bench-v2-client", "version": "0"},
    "capabilities": {},
}


class RawAgent:
    """A minimal agent on stdio, v1 or v2 (``version``): the bench peer contract's prompt
    (v2: the response, ``user_message``, ``running``, the chunks, ``idle``)."""

    def __init__(self, version: int) -> None:
        self.version = version
        self._dumps = json_dumps()
        self._out = sys.stdout.buffer
        self._turns = 0

    def serve(self) -> None:
        """Answer requests until stdin ends."""
        lines = Lines(self.on_message)
        stdin = sys.stdin.buffer.raw  # type: ignore[attr-defined]
        while data := stdin.read(256 * 1024):
            lines.feed(data)

    def _write(self, frame: dict[str, Any]) -> None:
        self._out.write(self._dumps(frame) + b"\n")

    def _answer(self, rid: Any, result: Any) -> None:
        self._write({"jsonrpc": "2.0", "id": rid, "result": result})

    def _update(self, session_id: str, update: dict[str, Any]) -> None:
        params = {"sessionId": session_id, "update": update}
        self._write({"jsonrpc": "2.0", "method": "session/update", "params": params})

    def on_message(self, message: Any) -> None:
        """Handle one message (notifications such as ``session/cancel`` are ignored)."""
        method, rid = message.get("method"), message.get("id")
        if rid is None or method is None:
            return
        if method == "initialize":
            self._answer(rid, self._initialize())
        elif method == "session/new":
            self._answer(rid, {"sessionId": BENCH_SESSION_ID})
        elif method == "session/prompt":
            self._prompt(rid, message["params"])
        else:
            error = {"code": -32601, "message": f"Method not found: {method}"}
            self._write({"jsonrpc": "2.0", "id": rid, "error": error})
        self._out.flush()

    def _initialize(self) -> dict[str, Any]:
        if self.version == 1:
            caps = {"loadSession": False, "promptCapabilities": {}, "mcpCapabilities": {}}
            info = {"name": "acp2-bench-v1-agent", "version": "0"}
            return {"protocolVersion": 1, "agentCapabilities": caps, "agentInfo": info}
        info = {"name": "acp2-bench-v2-agent", "version": "0"}
        caps2 = {"session": {"prompt": {}, "mcp": {}}}
        return {"protocolVersion": 2, "info": info, "capabilities": caps2}

    def _prompt(self, rid: Any, params: Any) -> None:
        sid, text = params["sessionId"], params["prompt"][0]["text"]
        self._turns += 1
        user, agent = f"user_{self._turns}", f"agent_{self._turns}"
        if self.version == 2:
            self._answer(rid, {"messageId": user})
            content = [{"type": "text", "text": text}]
            self._update(
                sid, {"sessionUpdate": "user_message", "messageId": user, "content": content}
            )
            self._update(sid, {"sessionUpdate": "state_update", "state": "running"})
        for i in range(parse_stream_prompt(text)):
            chunk = {"type": "text", "text": chunk_text(i)}
            update = {"sessionUpdate": "agent_message_chunk", "messageId": agent, "content": chunk}
            self._update(sid, update)
        if self.version == 1:
            self._answer(rid, {"stopReason": "end_turn"})
        else:
            idle = {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}
            self._update(sid, idle)


# -- one peering, measured ------------------------------------------------------------------


async def timed_turns(
    args: argparse.Namespace, pid: int, turn: Callable[[], Awaitable[Any]]
) -> dict[str, float]:
    """The p50 of ``args.prompts`` empty turns (after ``args.warmup``) and the CPU µs
    both processes spent per turn: a loaded machine stretches the wall time with
    scheduling waits, the CPU spent stays what the code costs."""
    await timed(0, args.warmup, turn)
    own0, peer0 = cpu_seconds(), proc_cpu_s(pid)
    samples = await timed(args.prompts, 0, turn)
    cpu = (cpu_seconds() - own0 + proc_cpu_s(pid) - peer0) * 1e6 / args.prompts
    return {"rtt_p50_us": percentile(samples, 50) * 1e6, "rtt_cpu_us": cpu}


def cpu_window(own0: float, peer0: float, pid: int, n: int) -> dict[str, float]:
    """CPU µs per update of this process and of ``pid`` since ``own0`` / ``peer0``."""
    own = (cpu_seconds() - own0) * 1e6 / n
    peer = (proc_cpu_s(pid) - peer0) * 1e6 / n
    return {"driver_cpu_us": own, "peer_cpu_us": peer, "cpu_us": own + peer}


def expected_chars(n: int) -> int:
    """The streamed text's length for ``stream n``."""
    return sum(len(chunk_text(i)) for i in range(n))


async def raw_client(version: int, args: argparse.Namespace, argv: list[str]) -> dict[str, float]:
    """The raw client of ``version`` against the agent ``argv``."""
    loop = asyncio.get_running_loop()
    transport, client = await loop.subprocess_exec(lambda: RawClient(version), *argv, stderr=None)
    stdin = transport.get_pipe_transport(0)
    assert isinstance(stdin, asyncio.WriteTransport)
    client.stdin = stdin
    session = await client.handshake()
    pid = transport.get_pid()
    rtt = await timed_turns(args, pid, lambda: client.prompt(session, stream_prompt(0)))
    await client.prompt(session, stream_prompt(10))
    own0, peer0, client.text_chars = cpu_seconds(), proc_cpu_s(pid), 0
    stop = await client.prompt(session, stream_prompt(args.updates))
    cpu = cpu_window(own0, peer0, pid, args.updates)
    if stop != "end_turn" or client.text_chars != expected_chars(args.updates):
        raise RuntimeError(f"v{version} stream ended {stop!r} with {client.text_chars} chars")
    stdin.close()
    await asyncio.wait_for(client.exited, 10)
    transport.close()
    return {**rtt, **cpu}


async def acp2_client(args: argparse.Namespace, argv: list[str]) -> dict[str, float]:
    """acp2's client (``acp2.client.connect``) against the agent ``argv``."""
    from acp2.client import connect

    async with connect(argv) as client:
        session = await client.new_session(SESSION_CWD)

        async def empty_turn() -> None:
            await (await session.prompt(stream_prompt(0))).wait()

        pid = child_pid()
        rtt = await timed_turns(args, pid, empty_turn)
        await (await session.prompt(stream_prompt(10))).wait()
        own0, peer0 = cpu_seconds(), proc_cpu_s(pid)
        work = await session.prompt(stream_prompt(args.updates))
        stop = await work.wait()
        cpu = cpu_window(own0, peer0, pid, args.updates)
        if stop != "end_turn" or len(work.text) != expected_chars(args.updates):
            raise RuntimeError(f"v2 stream ended {stop!r} with {len(work.text)} chars")
    return {**rtt, **cpu}


def run_one(measure: Measure, args: argparse.Namespace, argv: list[str]) -> dict[str, float]:
    """One peering in a fresh event loop (acp2's client on anyio's asyncio backend)."""
    import anyio

    return anyio.run(measure, args, argv)


def compare(
    name: str, bridged: list[dict[str, float]], direct: list[dict[str, float]]
) -> dict[str, float]:
    """The medians of both peerings and the bridge's delta and ratio, keyed ``name_*``."""
    out: dict[str, float] = {}
    for key in ("rtt_p50_us", "rtt_cpu_us", "cpu_us", "driver_cpu_us", "peer_cpu_us"):
        out[f"{name}_bridged_{key}"] = statistics.median(r[key] for r in bridged)
        out[f"{name}_direct_{key}"] = statistics.median(r[key] for r in direct)
    rtt_b, rtt_d = out[f"{name}_bridged_rtt_p50_us"], out[f"{name}_direct_rtt_p50_us"]
    out[f"{name}_rtt_delta_us"] = rtt_b - rtt_d
    out[f"{name}_rtt_ratio"] = rtt_b / rtt_d if rtt_d else 0.0
    out[f"{name}_rtt_cpu_delta_us"] = (
        out[f"{name}_bridged_rtt_cpu_us"] - out[f"{name}_direct_rtt_cpu_us"]
    )
    out[f"{name}_cpu_delta_us"] = out[f"{name}_bridged_cpu_us"] - out[f"{name}_direct_cpu_us"]
    if out[f"{name}_direct_cpu_us"] > 0:  # tiny runs may take less than a clock tick
        out[f"{name}_cpu_ratio"] = out[f"{name}_bridged_cpu_us"] / out[f"{name}_direct_cpu_us"]
    return out


def peerings(store: str) -> dict[str, tuple[Measure, list[str]]]:
    """Every peering measured, by key: ``front`` / ``back``, bridged / direct, and the
    brief's alternative baselines (``*_alt``: another kind of client or agent)."""
    me = [sys.executable, str(Path(__file__).resolve())]
    acp2_agent, v1_agent, v2_agent = agent_argv(store), [*me, "--agent", "1"], [*me, "--agent", "2"]
    return {
        "front_bridged": (partial(raw_client, 1), acp2_agent),
        "front_direct": (partial(raw_client, 2), acp2_agent),
        "front_alt": (acp2_client, acp2_agent),
        "back_bridged": (acp2_client, v1_agent),
        "back_direct": (acp2_client, v2_agent),
        "back_alt": (partial(raw_client, 1), v1_agent),
    }


def measure_all(args: argparse.Namespace, store: str) -> dict[str, float]:
    """Every peering, alternating, ``args.runs`` times each; the comparisons."""
    table = peerings(store)
    results: dict[str, list[dict[str, float]]] = {key: [] for key in table}
    for _ in range(max(1, args.runs)):
        for key, (measure, argv) in table.items():
            results[key].append(run_one(measure, args, argv))
    out = {"updates": float(args.updates)}
    for side in ("front", "back"):
        out.update(compare(side, results[f"{side}_bridged"], results[f"{side}_direct"]))
        alt = compare(f"{side}_alt", results[f"{side}_bridged"], results[f"{side}_alt"])
        out.update({k: v for k, v in alt.items() if "_bridged_" not in k})
    return out


def main() -> None:
    """Command line: the size options of ``_acp2.size_arguments``; ``--agent 1|2`` serves
    the raw agent of that version on stdio instead."""
    parser = size_arguments(__doc__)
    parser.add_argument("--agent", type=int, choices=(1, 2), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.agent:
        RawAgent(args.agent).serve()
        return
    require(*NEEDS)
    with tempfile.TemporaryDirectory(prefix="acp2-bench-") as tmp:
        store = str(Path(tmp) / "history.sqlite3") if args.store == "file" else ":memory:"
        emit_result(measure_all(args, store))


if __name__ == "__main__":
    main()

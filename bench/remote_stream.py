"""Remote stream throughput: ``acp2 serve --test-agent`` streams N ``agent_message_chunk``
updates to a raw client over a WebSocket (plain and durable) and over Streamable HTTP
(POST + SSE), on 127.0.0.1.

    .venv/bin/python bench/remote_stream.py [--updates N] [--profiles ws,ws-durable,sse]
    .venv/bin/python bench/remote_stream.py --profiles sse --server 'node agent.mjs --http 0'

The client is deliberately raw (``websockets`` / ``httpx``, JSON decode of every message,
no acp2 client code), so the number is the server's cost plus one decode per update: it
is what any client gets from ``acp2 serve``. Prints one line per profile: updates/s and
the server process's CPU µs per update (``/proc/<pid>/stat``, inside the window).
Not part of the test suite (speed lives in bench/). ``run.py --only remote`` measures
acp2's own client and the TypeScript SDK's client/server pair (``acp2_remote.py``,
``ts_remote.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import time
from typing import Any

import anyio

CWD = "/tmp"
INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": 2, "info": {"name": "bench", "version": "1"}, "capabilities": {}},
}


def _cpu(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _request(rid: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}


def _prompt(rid: int, sid: str, n: int) -> dict[str, Any]:
    return _request(
        rid,
        "session/prompt",
        {"sessionId": sid, "prompt": [{"type": "text", "text": f"stream {n}"}]},
    )


def _idle(m: dict[str, Any]) -> bool:
    u = m.get("params", {}).get("update", {})
    return u.get("sessionUpdate") == "state_update" and u.get("state") == "idle"


async def ws_run(url: str, n: int, durable: bool, pid: int) -> tuple[float, float]:
    from websockets.asyncio.client import connect

    headers = {"acp2-durable": "1"} if durable else {}
    seq = 0
    last = 0

    async def send(ws: Any, m: dict[str, Any]) -> None:
        nonlocal seq
        seq += 1
        await ws.send(json.dumps({"seq": seq, "msg": m} if durable else m))

    async def until(ws: Any, pred: Any) -> int:
        nonlocal last
        count = 0
        while True:
            frame = json.loads(await ws.recv())
            if durable:
                if "ack" in frame:
                    continue
                last = frame["seq"]
                if last % 64 == 0:
                    await ws.send(json.dumps({"ack": last}))
                frame = frame["msg"]
            count += 1
            if pred(frame):
                return count

    async with connect(
        url.replace("http", "ws", 1), additional_headers=headers, max_size=None
    ) as ws:
        await send(ws, INIT)
        await until(ws, lambda m: m.get("id") == 0)
        await send(ws, _request(1, "session/new", {"cwd": CWD, "mcpServers": []}))
        sid = ""

        def created(m: dict[str, Any]) -> bool:
            nonlocal sid
            if m.get("id") == 1:
                sid = m["result"]["sessionId"]
                return True
            return False

        await until(ws, created)
        await send(ws, _prompt(2, sid, 10))
        await until(ws, _idle)
        cpu0, t0, own = _cpu(pid), time.perf_counter(), time.process_time()
        await send(ws, _prompt(3, sid, n))
        await until(ws, _idle)
        client_us = (time.process_time() - own) / n * 1e6
        print(f"  client CPU {client_us:.1f} µs/update", file=sys.stderr)
        return time.perf_counter() - t0, _cpu(pid) - cpu0


async def sse_run(url: str, n: int, pid: int) -> tuple[float, float]:
    import httpx

    async with httpx.AsyncClient(timeout=None) as client:
        init = await client.post(url, json=INIT, headers={"content-type": "application/json"})
        cid = init.headers["acp-connection-id"]
        base = {"content-type": "application/json", "acp-connection-id": cid}
        get = {"accept": "text/event-stream", "acp-connection-id": cid}

        async def events(response: Any) -> Any:
            async for line in response.aiter_lines():
                if line.startswith("data:"):
                    yield json.loads(line[5:])

        async with client.stream("GET", url, headers=get) as main:
            await client.post(
                url, json=_request(1, "session/new", {"cwd": CWD, "mcpServers": []}), headers=base
            )
            async for m in events(main):
                if m.get("id") == 1:
                    sid = m["result"]["sessionId"]
                    break
        async with client.stream("GET", url, headers={**get, "acp-session-id": sid}) as stream:
            post = {**base, "acp-session-id": sid}
            await client.post(url, json=_prompt(2, sid, 10), headers=post)
            feed = events(stream)
            async for m in feed:
                if _idle(m):
                    break
            cpu0, t0 = _cpu(pid), time.perf_counter()
            await client.post(url, json=_prompt(3, sid, n), headers=post)
            async for m in feed:
                if _idle(m):
                    break
            return time.perf_counter() - t0, _cpu(pid) - cpu0


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--updates", type=int, default=50_000)
    parser.add_argument("--profiles", default="ws,ws-durable,sse")
    parser.add_argument(
        "--server",
        metavar="COMMAND",
        help="another server command printing 'listening on URL' on stderr, e.g. "
        "'node agent.mjs --http 0' (bench/ts: the TS SDK's AcpServer, WebSocket and SSE)",
    )
    args = parser.parse_args()
    acp2 = [sys.executable, "-m", "acp2"]
    acp2_serve = [*acp2, "serve", "--test-agent", "--no-token", "--port", "0"]
    argv = shlex.split(args.server) if args.server else acp2_serve
    server = subprocess.Popen(argv, stderr=subprocess.PIPE, text=True)
    try:
        assert server.stderr is not None
        line = server.stderr.readline()
        url = line.split("listening on ", 1)[1].strip()
        for profile in args.profiles.split(","):
            if profile == "sse":
                seconds, cpu = anyio.run(sse_run, url, args.updates, server.pid)
            else:
                seconds, cpu = anyio.run(
                    ws_run, url, args.updates, profile == "ws-durable", server.pid
                )
            print(
                f"{profile:11} {args.updates / seconds:10,.0f} updates/s"
                f"   server {cpu / args.updates * 1e6:6.1f} µs CPU/update"
            )
    finally:
        server.terminate()
        server.wait(10)
    return 0


if __name__ == "__main__":
    sys.exit(main())

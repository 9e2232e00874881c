"""Attack: a hostile ``ws://`` server nests JSON too deeply for ``acp2 run --url`` (issue
24, item 5).

The rpc reader survives any nesting, but the remote client reads each frame before it
does: the durable envelope (``durable.decode_frame``) and the routing fields of every
message (``acp2.rpc.envelope.read``). Before the fix msgspec's ``RecursionError``
escaped there, and one 10 KB frame made ``acp2 run --url`` exit 70 ("bug in acp2"). Now
a frame nested too deeply is that message's problem alone: the turn around it finishes
and the run exits 0. The servers are real, on 127.0.0.1: a WebSocket server
(``websockets``, plain and durable) and a Streamable HTTP server (an ASGI app under
uvicorn, SSE).
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
import uvicorn
from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import ConnectionClosed

from acp2.transport.durable import Retention, encode_data
from helpers.timeouts import RUN_TIMEOUT

pytestmark = pytest.mark.anyio

DEEP = "[" * 5_000 + "]" * 5_000  # 10 KB


def _update(body: str) -> str:
    return '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":' + (
        body + "}}"
    )


def hostile_turn(rid: Any) -> list[str]:
    """A prompt's turn with nested frames in every place the client peeks at."""
    user = json.dumps({"sessionUpdate": "user_message", "messageId": "u1", "content": []})
    chunk = {"type": "text", "text": "survived"}
    text = json.dumps({"sessionUpdate": "agent_message_chunk", "messageId": "a1", "content": chunk})
    return [
        '{"jsonrpc":"2.0","method":"x/notice","params":{"a":' + DEEP + "}}",
        '{"jsonrpc":"2.0","id":"ghost","method":"x/ask","params":{"a":' + DEEP + "}}",
        '{"jsonrpc":"2.0","id":"ghost","result":{"sessionId":' + DEEP + "}}",
        '{"x":' + DEEP + "}",
        json.dumps({"jsonrpc": "2.0", "id": rid, "result": {"messageId": "u1"}}),
        _update(user),
        _update('{"sessionUpdate":"state_update","state":"running"}'),
        _update('{"sessionUpdate":"session_info_update","_meta":{"x":' + DEEP + "}}"),
        _update(text),
        _update('{"sessionUpdate":"state_update","state":"idle","stopReason":"end_turn"}'),
    ]


def answers(message: dict[str, Any]) -> list[str]:
    method, rid = message.get("method"), message.get("id")
    if method == "initialize":
        result = {"protocolVersion": 2, "info": {"name": "h", "version": "0"}, "capabilities": {}}
        result["capabilities"] = {"session": {}}
    elif method == "session/new":
        result = {"sessionId": "s1"}
    elif method == "session/prompt":
        return hostile_turn(rid)
    elif rid is not None and method is not None:
        error = {"code": -32601, "message": "no such method"}
        return [json.dumps({"jsonrpc": "2.0", "id": rid, "error": error})]
    else:
        return []
    return [json.dumps({"jsonrpc": "2.0", "id": rid, "result": result})]


class HostileServer:
    """Answers like an agent; durable (numbered frames) when ``durable`` and asked."""

    def __init__(self, durable: bool) -> None:
        self.durable = durable
        self.granted = False

    def process_response(self, ws: ServerConnection, request: Any, response: Any) -> Any:
        if self.durable and request.headers.get("Acp2-Durable") == "1":
            response.headers["Acp2-Durable"] = Retention().header()
            response.headers["Acp-Connection-Id"] = "hostile-1"
            self.granted = True
        return response

    async def handler(self, ws: ServerConnection) -> None:
        seq = 0
        try:
            async for frame in ws:
                message = json.loads(frame)
                if self.granted:
                    if "msg" not in message:
                        continue  # an ack
                    message = message["msg"]
                for line in answers(message):
                    seq += 1
                    out = encode_data(seq, line.encode()).decode() if self.granted else line
                    await ws.send(out)
        except ConnectionClosed:
            pass


@asynccontextmanager
async def hostile_server(durable: bool) -> AsyncIterator[str]:
    server = HostileServer(durable)
    async with serve(
        server.handler, "127.0.0.1", 0, process_response=server.process_response, max_size=None
    ) as running:
        port = next(iter(running.sockets)).getsockname()[1]
        yield f"ws://127.0.0.1:{port}/acp"


@pytest.mark.parametrize("durable", [False, True], ids=["plain", "durable"])
async def test_acp2_run_survives_a_server_that_nests_frames_too_deeply(
    durable: bool, tmp_path: Path
) -> None:
    env = dict(os.environ, ACP2_DATA_DIR=str(tmp_path / "data"))
    env.pop("ACP2_TOKEN", None)
    async with hostile_server(durable) as url:
        argv = [sys.executable, "-m", "acp2", "run", "--url", url, "hello"]
        with anyio.fail_after(RUN_TIMEOUT):
            done = await anyio.run_process(argv, env=env, cwd=tmp_path, check=False)
    out, err = done.stdout.decode(), done.stderr.decode()
    assert done.returncode == 0, (done.returncode, out[-1000:], err[-2000:])
    assert "survived" in out
    assert "bug in acp2" not in err
    assert "Traceback" not in err


class HostileSse:
    """A Streamable HTTP server (no WebSocket: the client falls back to SSE) answering like
    an agent, every message on the connection's stream; session streams stay empty."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[str | None] = asyncio.Queue()
        self.closing = asyncio.Event()
        self.readers = 0

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        if scope["method"] == "POST":
            await self._post(receive, send)
        elif "upgrade" in headers:
            await _respond(send, 404, b"")  # no WebSocket here
        elif "acp-session-id" in headers:
            await _start_events(send)
            await self.closing.wait()
            await send({"type": "http.response.body", "body": b""})
        else:
            await _start_events(send)
            self.readers += 1
            while (line := await self.queue.get()) is not None:
                event = b"data: " + line.encode() + b"\n\n"
                await send({"type": "http.response.body", "body": event, "more_body": True})
            await send({"type": "http.response.body", "body": b""})

    async def _post(self, receive: Any, send: Any) -> None:
        body, more = b"", True
        while more:
            part = await receive()
            body, more = body + part.get("body", b""), part.get("more_body", False)
        message = json.loads(body) if body else {}
        if message.get("method") == "initialize":
            await _respond(send, 200, answers(message)[0].encode(), ("acp-connection-id", "c1"))
            return
        await _respond(send, 202 if message else 204, b"")
        for line in answers(message):
            self.queue.put_nowait(line)

    def close(self) -> None:
        self.closing.set()
        for _ in range(self.readers):
            self.queue.put_nowait(None)


async def _respond(send: Any, status: int, body: bytes, *extra: tuple[str, str]) -> None:
    headers = [(b"content-type", b"application/json")] if body else []
    headers += [(k.encode(), v.encode()) for k, v in extra]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _start_events(send: Any) -> None:
    headers = [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-store")]
    await send({"type": "http.response.start", "status": 200, "headers": headers})


@asynccontextmanager
async def hostile_sse_server() -> AsyncIterator[str]:
    app = HostileSse()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    # An event stream whose client went away waits for its next event: bound the wait.
    config = uvicorn.Config(
        app, ws="none", lifespan="off", log_level="error", timeout_graceful_shutdown=1
    )
    server = uvicorn.Server(config)
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.serve, [sock])
        try:
            yield f"http://127.0.0.1:{sock.getsockname()[1]}/acp"
        finally:
            app.close()
            server.should_exit = True
    sock.close()


async def test_acp2_run_survives_an_sse_server_that_nests_events_too_deeply(
    tmp_path: Path,
) -> None:
    env = dict(os.environ, ACP2_DATA_DIR=str(tmp_path / "data"))
    env.pop("ACP2_TOKEN", None)
    async with hostile_sse_server() as url:
        argv = [sys.executable, "-m", "acp2", "run", "--url", url, "hello"]
        with anyio.fail_after(RUN_TIMEOUT):
            done = await anyio.run_process(argv, env=env, cwd=tmp_path, check=False)
    out, err = done.stdout.decode(), done.stderr.decode()
    assert done.returncode == 0, (done.returncode, out[-1000:], err[-2000:])
    assert "survived" in out
    assert "bug in acp2" not in err
    assert "Traceback" not in err

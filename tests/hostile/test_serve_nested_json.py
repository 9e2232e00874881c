"""Attack: deeply nested JSON at ``acp2 serve``'s own decode boundaries (issue 24, item 5).

The rpc reader survives any nesting, but the server reads a message's envelope before
the agent does (routing, durable frames) and an agent's output before the client does.
Before the fix msgspec's ``RecursionError`` escaped there: an HTTP POST nested 1,000
deep (2 KB) was answered 500 with a traceback in the log, and a hostile agent behind
``acp2 serve -- AGENT`` killed its connection with one nested line. Now the POST gets a
400 carrying a JSON-RPC ``-32600`` (the rpc reader's answer: ``id: null`` unless the id
could be read) and logs no traceback, a nested message
inside a durable WebSocket frame is answered ``-32600`` on a socket that stays open, and
the agent's nested lines are routed (or dropped) while its turn goes on.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from websockets.asyncio.client import ClientConnection, connect

from helpers.serve_process import serving
from helpers.timeouts import TIMEOUT

pytestmark = pytest.mark.anyio

DEPTH = 1_000
NESTED_AGENT = [sys.executable, str(Path(__file__).with_name("nested_json_agent.py")), "1000"]
INIT = {"protocolVersion": 2, "capabilities": {}, "info": {"name": "t", "version": "0"}}


def nested(depth: int = DEPTH) -> bytes:
    return b"[" * depth + b"]" * depth


def rpc(rid: Any, method: str, params: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}).encode()


def text(rid: Any, method: str, params: Any) -> str:
    """A WebSocket text frame carrying one request."""
    return rpc(rid, method, params).decode()


@contextmanager
def served(tmp_path: Path, *agent: str) -> Iterator[tuple[str, list[str]]]:
    """``acp2 serve`` on 127.0.0.1 (the test agent, or ``agent``): its base URL and the
    lines of its stderr so far."""
    lines: list[str] = []
    with serving(tmp_path, *(["--", *agent] if agent else ["--test-agent"]), sink=lines) as port:
        yield f"127.0.0.1:{port}", lines


async def test_a_post_nested_a_thousand_deep_is_answered_400_with_a_json_rpc_error(
    tmp_path: Path,
) -> None:
    with served(tmp_path) as (address, log):
        url = f"http://{address}/acp"
        headers = {"Content-Type": "application/json"}
        async with httpx.AsyncClient(timeout=TIMEOUT) as client:
            # The answer is the rpc reader's: it echoes an id it can read (the second).
            bodies = [
                (b'{"x":' + nested() + b"}", None),
                (b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":' + nested() + b"}", 1),
                (b'{"jsonrpc":"2.0","id":' + nested() + b',"method":"initialize"}', None),
            ]
            for body, rid in bodies * 20:
                answer = await client.post(url, content=body, headers=headers)
                assert answer.status_code == 400, answer.text
                error = answer.json()
                assert error["id"] == rid
                assert error["error"]["code"] == -32600
                assert "nested too deeply" in error["error"]["message"]
            ok = await client.post(url, content=rpc(0, "initialize", INIT), headers=headers)
            assert ok.status_code == 200, ok.text
    text = "".join(log)
    assert "Traceback" not in text, text[-2000:]
    assert "RecursionError" not in text, text[-2000:]


async def test_a_post_the_rpc_reader_judges_invalid_gets_its_error_not_the_agent(
    tmp_path: Path,
) -> None:
    with served(tmp_path) as (address, log):
        url = f"http://{address}/acp"
        headers = {"Content-Type": "application/json"}
        async with httpx.AsyncClient(timeout=TIMEOUT) as client:
            ok = await client.post(url, content=rpc(0, "initialize", INIT), headers=headers)
            assert ok.status_code == 200, ok.text
            headers["Acp-Connection-Id"] = ok.headers["acp-connection-id"]
            cases = [
                (b'{"id":7,"method":"session/list","params":{}}', -32600, 7),  # no jsonrpc
                (b'{"jsonrpc":"2.0","id":true,"method":"session/list"}', -32600, None),
                (b'{"jsonrpc":"2.0","id":8,"method":"m"', -32700, None),  # cut short
                (b'"just a string"', -32600, None),
            ]
            for body, code, rid in cases:
                answer = await client.post(url, content=body, headers=headers)
                assert answer.status_code == 400, answer.text
                error = answer.json()
                assert (error["error"]["code"], error["id"]) == (code, rid), error
            # The connection goes on.
            listing = rpc(9, "session/list", {})
            assert (await client.post(url, content=listing, headers=headers)).status_code == 202
    assert "Traceback" not in "".join(log)


async def frames_until(ws: ClientConnection, rid: Any) -> list[dict[str, Any]]:
    """Every message (from durable frames too) up to and including the answer to ``rid``."""
    got: list[dict[str, Any]] = []
    with anyio.fail_after(TIMEOUT):
        while True:
            frame = json.loads(await ws.recv())
            for message in frame.get("msgs") or [frame.get("msg", frame)]:
                got.append(message)
                answered = isinstance(message, dict) and "method" not in message
                if answered and message.get("id") == rid:
                    return got


@asynccontextmanager
async def socket(address: str, durable: bool = False) -> AsyncIterator[ClientConnection]:
    headers = {"Acp2-Durable": "1"} if durable else {}
    async with connect(f"ws://{address}/acp", additional_headers=headers) as ws:
        yield ws


async def test_a_nested_message_in_a_durable_websocket_frame_is_answered_on_an_open_socket(
    tmp_path: Path,
) -> None:
    with served(tmp_path) as (address, log):
        async with socket(address, durable=True) as ws:
            await ws.send((b'{"seq":1,"msg":%s}' % rpc(0, "initialize", INIT)).decode())
            await frames_until(ws, 0)
            deep = b'{"jsonrpc":"2.0","id":7,"method":"session/list","params":' + nested()
            await ws.send((b'{"seq":2,"msg":%s}}' % deep).decode())
            error = (await frames_until(ws, 7))[-1]["error"]
            assert error["code"] == -32600
            assert "nested too deeply" in error["message"]
            await ws.send((b'{"seq":3,"msg":%s}' % rpc(8, "session/list", {})).decode())
            assert "sessions" in (await frames_until(ws, 8))[-1]["result"]
    assert "Traceback" not in "".join(log), "".join(log)[-2000:]


async def test_a_hostile_agents_nested_lines_do_not_kill_its_connection(tmp_path: Path) -> None:
    with served(tmp_path, *NESTED_AGENT) as (address, log):
        url = f"http://{address}/acp"
        async with httpx.AsyncClient(timeout=TIMEOUT) as client:
            post = {"Content-Type": "application/json"}
            answer = await client.post(url, content=rpc(0, "initialize", INIT), headers=post)
            post["Acp-Connection-Id"] = answer.headers["acp-connection-id"]
            get = {"Accept": "text/event-stream", **post}
            async with client.stream("GET", url, headers=get) as events:
                lines = events.aiter_lines()
                new = {"cwd": str(tmp_path), "mcpServers": []}
                await client.post(url, content=rpc(1, "session/new", new), headers=post)
                await _until(lines, '"id":1')
                post["Acp-Session-Id"] = get["Acp-Session-Id"] = "s1"
                async with client.stream("GET", url, headers=get) as session_events:
                    updates = session_events.aiter_lines()
                    # The answer to the first is nested too deeply to route; the turn
                    # after it must still stream and end.
                    for turn, words in ((2, "deep-response"), (3, "hello 3"), (4, "hello 4")):
                        block = {"type": "text", "text": words}
                        body = rpc(turn, "session/prompt", {"sessionId": "s1", "prompt": [block]})
                        posted = await client.post(url, content=body, headers=post)
                        assert posted.status_code == 202, posted.text
                    assert "hello 3" in await _until(updates, '"state":"idle"')
                    assert "hello 4" in await _until(updates, '"state":"idle"')
    assert "Traceback" not in "".join(log), "".join(log)[-2000:]


async def _until(lines: AsyncIterator[str], needle: str) -> str:
    """The SSE data lines read up to and including the first that holds ``needle``."""
    got = ""
    with anyio.fail_after(TIMEOUT):
        async for line in lines:
            got += line + "\n"
            if needle in line.replace(" ", ""):
                return got
    raise AssertionError(f"the stream ended before {needle}: {got[-500:]}")

"""Attack: one line of deeply nested JSON (issue 10, section 1).

Before the fix a ~2 KB line of 1,000 nested arrays raised ``RecursionError`` out of the
decoder: the reader closed the connection, the agent exited 0 and the client died with a
traceback. Now the line is that message's error alone -- ``-32600`` with its id (a
request), its waiter failing (a response), one log line (a notification) -- and the next
request is answered. Depths 1,000 / 10,000 / 100,000, at the top level, in ``params``, in
a prompt's ``_meta`` and in a notification, against the real agent over stdio (``acp2
test-agent`` subprocess) and over a memory pair, and against the client from a hostile
agent subprocess.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp2.client import connect
from acp2.errors import RemoteProtocolError
from acp2.rpc import Connection
from acp2.testing.scenarios import build_test_agent
from acp2.transport.stdio import spawn_agent
from helpers import RawWire, raw_peer, timeouts
from helpers.inprocess import serving

pytestmark = pytest.mark.anyio

DEPTHS = [1_000, 10_000, 100_000]
AGENT = [sys.executable, "-m", "acp2", "test-agent"]
HOSTILE_AGENT = [sys.executable, str(Path(__file__).with_name("nested_json_agent.py"))]
INIT = {"protocolVersion": 2, "capabilities": {}, "info": {"name": "t", "version": "0"}}


def nested(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


def request(rid: Any, method: str, params: bytes) -> bytes:
    head = {"jsonrpc": "2.0", "id": rid, "method": method}
    return json.dumps(head, separators=(",", ":")).encode()[:-1] + b',"params":' + params + b"}\n"


async def answer(wire: RawWire, rid: Any) -> dict[str, Any]:
    """The next response (notifications are skipped), which must answer ``rid``."""
    frame = await wire.frame()
    while isinstance(frame, dict) and "method" in frame and "id" not in frame:
        frame = await wire.frame()
    assert isinstance(frame, dict), frame
    assert frame.get("id") == rid, frame
    return frame


async def still_answers(wire: RawWire, rid: str) -> None:
    await wire.send(request(rid, "session/list", b"{}"))
    assert "sessions" in (await answer(wire, rid))["result"]


async def attack_the_agent(wire: RawWire, depth: int) -> None:
    """Every position in turn; after each, a normal request is answered."""
    deep = nested(depth)
    await wire.send(request(0, "initialize", json.dumps(INIT).encode()))
    assert (await answer(wire, 0))["result"]["protocolVersion"] == 2
    await wire.send(deep + b"\n")  # top level
    top = await answer(wire, None)
    assert top["error"]["code"] == -32600
    await still_answers(wire, "after-top")
    await wire.send(request(1, "session/list", b'{"x":' + deep + b"}"))  # in params
    error = (await answer(wire, 1))["error"]
    assert error == {"code": -32600, "message": "Invalid request: JSON nested too deeply"}
    await still_answers(wire, "after-params")
    await wire.send(request("new", "session/new", b'{"cwd":"/tmp","mcpServers":[]}'))
    sid = (await answer(wire, "new"))["result"]["sessionId"]
    prompt = b'{"sessionId":"%s","prompt":[],"_meta":{"x":%s}}' % (sid.encode(), deep)
    await wire.send(request("p", "session/prompt", prompt))  # in a prompt's _meta
    assert (await answer(wire, "p"))["error"]["code"] == -32600
    await still_answers(wire, "after-meta")
    cancel = b'{"jsonrpc":"2.0","method":"session/cancel","params":{"x":%s}}\n' % deep
    await wire.send(cancel)  # a notification: dropped, no reply
    await still_answers(wire, "after-notification")


@pytest.mark.parametrize("depth", DEPTHS)
async def test_nested_json_gets_an_error_and_the_stdio_agent_keeps_answering(depth: int) -> None:
    with anyio.fail_after(timeouts.SCENARIO_TIMEOUT):
        async with spawn_agent(AGENT) as proc:
            wire = RawWire(proc)  # type: ignore[arg-type]  # any Transport will do
            await attack_the_agent(wire, depth)
        assert proc.returncode == 0  # it ended because we closed its stdin, not before


@pytest.mark.parametrize("depth", DEPTHS)
async def test_nested_json_gets_an_error_and_the_agent_keeps_answering_in_memory(
    depth: int,
) -> None:
    with anyio.fail_after(timeouts.SCENARIO_TIMEOUT):
        async with serving(build_test_agent(), wait=True) as agents:
            await attack_the_agent(RawWire(agents.open()), depth)


@asynccontextmanager
async def echo_peer() -> AsyncIterator[tuple[Connection, RawWire]]:
    async def echo(params: Any) -> Any:
        return params

    async with raw_peer() as (conn, wire):
        conn.on_request("echo", dict, echo)
        yield conn, wire


@pytest.mark.parametrize("depth", DEPTHS)
async def test_nested_json_from_a_peer_fails_only_our_waiter_and_drops_only_the_update(
    depth: int,
) -> None:
    """The client's role over a memory pair: a deep response fails its request; a deep
    notification, batch or update is dropped; the connection keeps working."""
    deep = nested(depth)
    seen: list[Any] = []
    with anyio.fail_after(timeouts.SCENARIO_TIMEOUT):
        async with echo_peer() as (conn, wire):
            conn.on_notification("session/update", dict, seen.append)
            async with anyio.create_task_group() as tg:

                async def ask() -> None:
                    with pytest.raises(RemoteProtocolError, match="nested too deeply"):
                        await conn.request("session/prompt", {}, dict)

                tg.start_soon(ask)
                sent = await wire.frame()
                await wire.send(b'{"jsonrpc":"2.0","id":%d,"result":%s}\n' % (sent["id"], deep))
            assert (await answer(wire, None))["error"]["code"] == -32600  # as for any bad response
            update = b'{"jsonrpc":"2.0","method":"session/update","params":{"update":%s}}\n'
            await wire.send(update % deep)
            await wire.send(b"[" + deep + b"]\n")
            await wire.send(b'{"jsonrpc":"2.0","method":"session/update","params":{"n":1}}\n')
            await wire.send(request("e", "echo", b'{"ok":true}'))
            assert (await answer(wire, None))["error"]["code"] == -32600  # the bare batch
            assert (await answer(wire, "e"))["result"] == {"ok": True}
            assert seen == [{"n": 1}]
            assert not conn.closed


@pytest.mark.parametrize("depth", DEPTHS)
async def test_the_client_survives_a_hostile_agent_sending_nested_json_over_stdio(
    depth: int,
) -> None:
    """The acp2 client against a real agent process that sends deep updates and a deep
    response: the turn completes, the deep response fails only its own prompt."""
    with anyio.fail_after(timeouts.SCENARIO_TIMEOUT):
        async with connect([*HOSTILE_AGENT, str(depth)]) as client:
            session = await client.new_session()
            work = await session.prompt("survived")
            assert await work.wait() == "end_turn"
            assert work.text == "survived"
            with pytest.raises(RemoteProtocolError, match="nested too deeply"):
                await session.prompt("deep-response")
            again = await session.prompt("again")
            assert await again.wait() == "end_turn"
            assert again.text == "again"
            assert not client.closed

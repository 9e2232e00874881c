"""Attack: a frame over the 64 MiB message limit through ``acp2 bridge`` (issue 24, item 9).

Between two peers of the same version the bridge copies frames unchanged, except a line
over the limit, which it drops (the peer would refuse it anyway). Before the fix the drop
was silent: the editor's request over 64 MiB was never answered and its prompt hung
forever (``acp2 agent`` itself answers ``-32600`` in under a second), and so did a
request whose response was over the limit. Now the bridge answers as the rpc reader
does: the oversized request gets ``-32600`` with its own id, the request whose response
was dropped gets a ``-32600`` error response, and the next request goes through. A v1
client (this test, over real pipes) and a v1 agent subprocess.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream

from helpers.processes import ACP2, isolated_env
from helpers.timeouts import PROCESS_TIMEOUT, TIMEOUT

pytestmark = pytest.mark.anyio

AGENT = [sys.executable, str(Path(__file__).with_name("oversized_v1_agent.py"))]
OVER = 65 * 1024 * 1024
V1_INITIALIZE = {"protocolVersion": 1, "clientCapabilities": {}}


def line(rid: Any, method: str, params: Any) -> bytes:
    message = {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}
    return json.dumps(message).encode() + b"\n"


async def answer(out: BufferedByteReceiveStream, rid: Any) -> dict[str, Any]:
    with anyio.fail_after(TIMEOUT):
        while True:
            message = json.loads(await out.receive_until(b"\n", 1 << 20))
            if message.get("id") == rid and "method" not in message:
                return dict(message)


async def started(tmp_path: Path) -> tuple[Process, BufferedByteReceiveStream]:
    process = await anyio.open_process(
        [*ACP2, "bridge", "--", *AGENT], env=isolated_env(tmp_path / "data"), cwd=tmp_path
    )
    assert process.stdin is not None
    assert process.stdout is not None
    out = BufferedByteReceiveStream(process.stdout)
    await process.stdin.send(line(0, "initialize", V1_INITIALIZE))
    assert (await answer(out, 0))["result"]["protocolVersion"] == 1
    return process, out


async def stop(process: Process) -> None:
    assert process.stdin is not None
    await process.stdin.aclose()
    with anyio.fail_after(PROCESS_TIMEOUT):
        await process.wait()


async def test_a_request_over_the_limit_is_answered_with_its_id_instead_of_hanging(
    tmp_path: Path,
) -> None:
    process, out = await started(tmp_path)
    assert process.stdin is not None
    head = b'{"jsonrpc":"2.0","id":7,"method":"session/prompt","params":{"sessionId":"s1",'
    big = head + b'"prompt":[{"type":"text","text":"' + b"a" * OVER + b'"}]}}\n'
    async with anyio.create_task_group() as tg:
        tg.start_soon(process.stdin.send, big)
        error = (await answer(out, 7))["error"]
    assert error["code"] == -32600
    assert "exceeds" in error["message"]
    await process.stdin.send(line(8, "x/ping", {}))
    assert (await answer(out, 8))["result"] == {"ok": True}
    await stop(process)


async def test_a_response_over_the_limit_fails_the_request_it_answers(tmp_path: Path) -> None:
    process, out = await started(tmp_path)
    assert process.stdin is not None
    await process.stdin.send(line("big", "x/big", {}))
    error = (await answer(out, "big"))["error"]
    assert error["code"] == -32600
    assert "exceeds" in error["message"]
    await process.stdin.send(line(9, "x/ping", {}))
    assert (await answer(out, 9))["result"] == {"ok": True}
    await stop(process)

"""A v1 agent's own request ids come back unchanged through the bridge: ``0`` and UUID
strings, as real v1 agents send them. The agent here writes raw JSON lines."""

from __future__ import annotations

import json
import uuid
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import pytest

import acp2.compat.v1.schema as v1
from acp2.bridge.back import serve_back_transports
from acp2.client import allow_all, connect_transport
from acp2.transport.memory import MemoryTransport, memory_pair
from helpers.timeouts import TIMEOUT

RESULT = v1.InitializeResponse(protocol_version=1)


class RawAgent:
    """A v1 agent as JSON lines on a memory transport: answers ``session/new``, and
    hands every other message to the test."""

    def __init__(self, transport: MemoryTransport) -> None:
        self.transport = transport
        self.received: anyio.abc.ObjectSendStream[dict[str, Any]]
        self.inbox: anyio.abc.ObjectReceiveStream[dict[str, Any]]
        self.received, self.inbox = anyio.create_memory_object_stream[dict[str, Any]](16)

    async def send(self, message: dict[str, Any]) -> None:
        await self.transport.send(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")

    async def run(self) -> None:
        buffer = b""
        while chunk := await self.transport.receive():
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                await self._take(json.loads(line))

    async def _take(self, message: dict[str, Any]) -> None:
        if message.get("method") == "session/new":
            await self.send({"id": message["id"], "result": {"sessionId": "s1"}})
        else:
            await self.received.send(message)


def permission(request_id: Any) -> dict[str, Any]:
    return {
        "id": request_id,
        "method": "session/request_permission",
        "params": {
            "sessionId": "s1",
            "toolCall": {"toolCallId": "t1"},
            "options": [{"optionId": "ok", "name": "Allow", "kind": "allow_once"}],
        },
    }


@pytest.mark.anyio
@pytest.mark.parametrize("request_id", [0, str(uuid.uuid4())], ids=["zero", "uuid"])
async def test_a_v1_request_id_is_answered_as_sent(tmp_path: Path, request_id: Any) -> None:
    client_end, bridge_v2 = memory_pair()
    bridge_v1, agent_end = memory_pair()
    agent = RawAgent(agent_end)
    with anyio.fail_after(TIMEOUT):
        async with anyio.create_task_group() as tg:
            tg.start_soon(agent.run)
            tg.start_soon(partial(serve_back_transports, bridge_v2, bridge_v1, RESULT))
            async with connect_transport(client_end, cwd=tmp_path, permissions=allow_all) as c:
                await c.new_session()
                await agent.send(permission(request_id))
                answer = await agent.inbox.receive()
            tg.cancel_scope.cancel()
    assert answer["id"] == request_id
    assert answer["result"] == {"outcome": {"outcome": "selected", "optionId": "ok"}}

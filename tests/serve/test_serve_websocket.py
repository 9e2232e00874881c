"""The WebSocket profile end to end: a full turn over one socket (plain, RFD)."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from serve_helpers import agent_app, initialize, is_idle, new_session, prompt, serve
from websockets.asyncio.client import ClientConnection, connect

from helpers.timeouts import TIMEOUT

pytestmark = pytest.mark.anyio


async def until(ws: ClientConnection, predicate: Any) -> list[dict[str, Any]]:
    """Every message up to and including the first ``predicate`` accepts."""
    seen = []
    with anyio.fail_after(TIMEOUT):
        while True:
            message = json.loads(await ws.recv())
            seen.append(message)
            if predicate(message):
                return seen


async def test_a_full_turn_goes_over_one_websocket() -> None:
    async with serve(agent_app()) as served, connect(served.ws_url) as ws:
        assert ws.response is not None
        assert ws.response.headers["acp-connection-id"]
        await ws.send(json.dumps(initialize()))
        (answer,) = await until(ws, lambda m: m.get("id") == 0)
        assert answer["result"]["protocolVersion"] == 2
        await ws.send(json.dumps(new_session(1)))
        created = await until(ws, lambda m: m.get("id") == 1)
        sid = created[-1]["result"]["sessionId"]
        await ws.send(json.dumps(prompt(2, sid, "echo hi there")))
        turn = await until(ws, is_idle)
        text = "".join(
            m["params"]["update"]["content"]["text"]
            for m in turn
            if m.get("params", {}).get("update", {}).get("sessionUpdate") == "agent_message_chunk"
        )
        assert text == "hi there"
        (connection,) = served.app.registry.connections()
        await ws.close()
        # A plain connection ends with its socket (RFD).
        with anyio.fail_after(TIMEOUT):
            await connection.ended.wait()

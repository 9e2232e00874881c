"""What serves each connection: one shared in-process Agent (sessions outlive
connections), or one spliced stdio subprocess per connection."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from serve_helpers import (
    SESSION_CWD,
    agent_app,
    initialize,
    is_idle,
    new_session,
    prompt,
    request,
    serve,
)
from websockets.asyncio.client import ClientConnection, connect

from acp2.serve import create_app, load_agent
from helpers.timeouts import TIMEOUT

pytestmark = pytest.mark.anyio


async def until(ws: ClientConnection, predicate: Any) -> list[dict[str, Any]]:
    seen = []
    with anyio.fail_after(TIMEOUT):
        while True:
            seen.append(json.loads(await ws.recv()))
            if predicate(seen[-1]):
                return seen


async def test_a_session_outlives_its_connection_and_resumes_on_a_new_one() -> None:
    async with serve(agent_app()) as served:
        async with connect(served.ws_url) as first:
            await first.send(json.dumps(initialize()))
            await first.send(json.dumps(new_session(1)))
            sid = (await until(first, lambda m: m.get("id") == 1))[-1]["result"]["sessionId"]
            await first.send(json.dumps(prompt(2, sid, "echo before")))
            await until(first, is_idle)
        async with connect(served.ws_url) as second:
            await second.send(json.dumps(initialize()))
            resume = request(1, "session/resume", {"sessionId": sid, "cwd": SESSION_CWD})
            await second.send(json.dumps(resume))
            answer = (await until(second, lambda m: m.get("id") == 1))[-1]
            assert "result" in answer, answer
            await second.send(json.dumps(prompt(2, sid, "echo after")))
            turn = await until(second, is_idle)
        assert any("after" in json.dumps(m) for m in turn)


async def test_an_agent_command_gets_one_subprocess_per_connection() -> None:
    app = create_app(command=[sys.executable, "-m", "acp2", "test-agent"])
    async with serve(app) as served, connect(served.ws_url) as ws:
        await ws.send(json.dumps(initialize()))
        (answer,) = await until(ws, lambda m: m.get("id") == 0)
        assert answer["result"]["info"]["name"] == "acp2-test-agent"
        await ws.send(json.dumps(new_session(1)))
        sid = (await until(ws, lambda m: m.get("id") == 1))[-1]["result"]["sessionId"]
        await ws.send(json.dumps(prompt(2, sid, "echo spliced")))
        assert "spliced" in json.dumps(await until(ws, is_idle))


def test_load_agent_takes_an_agent_or_a_function_returning_one() -> None:
    agent = load_agent("acp2.testing.scenarios:build_test_agent")
    assert agent.name == "acp2-test-agent"
    with pytest.raises(ValueError, match="module:attribute"):
        load_agent("no-colon")
    with pytest.raises(ValueError, match="exactly one"):
        create_app()


async def test_the_environment_app_is_built_on_its_first_event(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from acp2.serve import EnvApp

    monkeypatch.setenv("ACP2_SERVE_APP", "acp2.testing.scenarios:build_test_agent")
    monkeypatch.setenv("ACP2_TOKEN", "t0k")
    app = EnvApp()
    async with serve(app) as served:
        import httpx

        async with httpx.AsyncClient() as client:
            refused = await client.post(served.url, json=initialize())
            accepted = await client.post(
                served.url, json=initialize(), headers={"authorization": "Bearer t0k"}
            )
    assert (refused.status_code, accepted.status_code) == (401, 200)


NEWER_V2 = Path(__file__).parents[1] / "client" / "newer_v2_agent.py"


async def test_unmodelled_fields_reach_a_remote_client_intact_through_a_spliced_agent() -> None:
    """Fault 5: ``acp2 serve`` forwards an agent's frames; what it does not model survives."""
    app = create_app(command=[sys.executable, str(NEWER_V2)])
    async with serve(app) as served, connect(served.ws_url) as ws:
        await ws.send(json.dumps(initialize()))
        (answer,) = await until(ws, lambda m: m.get("id") == 0)
        capabilities = answer["result"]["capabilities"]
        assert capabilities["experimentalX"] is True
        assert capabilities["session"]["futureThing"] == {"x": 1}
        assert capabilities["providers"] == {}
        await ws.send(json.dumps(new_session(1)))
        created = (await until(ws, lambda m: m.get("id") == 1))[-1]["result"]
        assert created["titleX"] == "untitled"
        await ws.send(json.dumps(prompt(2, created["sessionId"], "hi")))
        turn = await until(ws, is_idle)
    idle = turn[-1]["params"]["update"]
    assert idle["usage"]["reasoningTokensX"] == 7
    assert idle["turnCostX"] == {"amount": 0.1}
    auth = [m for m in turn if m.get("method") == "_auth/status_update"]
    assert auth == [
        {
            "jsonrpc": "2.0",
            "method": "_auth/status_update",
            "params": {"state": "authenticated", "accounts": [{"id": "me"}]},
        }
    ]

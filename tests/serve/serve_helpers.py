"""Run an acp2 serve application under a real uvicorn on 127.0.0.1, and speak to it with
raw httpx / websockets clients (no acp2 client code: the wire is what is tested)."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import anyio
import httpx

from acp2.serve import AcpApp, ServeConfig, create_app
from acp2.testing.scenarios import build_test_agent
from helpers.asgi import Served, serve
from helpers.timeouts import TIMEOUT

__all__ = ["Served", "serve"]  # re-exported: the serve tests import them from here

SESSION_CWD = "/tmp/acp2-agent-tests"


def initialize(request_id: int = 0) -> dict[str, Any]:
    """An initialize request asking for v2."""
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "initialize",
        "params": {
            "protocolVersion": 2,
            "info": {"name": "raw-test-client", "version": "1"},
            "capabilities": {},
        },
    }


def request(request_id: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """A JSON-RPC request."""
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


def new_session(request_id: int) -> dict[str, Any]:
    """session/new in the tests' session directory."""
    return request(request_id, "session/new", {"cwd": SESSION_CWD, "mcpServers": []})


def prompt(request_id: int, session_id: str, text: str) -> dict[str, Any]:
    """session/prompt with one text block."""
    params = {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}
    return request(request_id, "session/prompt", params)


def agent_app(**config: Any) -> AcpApp:
    """The test agent served with ``ServeConfig(**config)``."""
    return create_app(build_test_agent(), config=ServeConfig(**config))


def post_headers(connection_id: str | None = None, session_id: str | None = None) -> dict[str, str]:
    """The headers of a POST on a connection (and session)."""
    headers = {"content-type": "application/json"}
    if connection_id:
        headers["acp-connection-id"] = connection_id
    if session_id:
        headers["acp-session-id"] = session_id
    return headers


@dataclass
class Event:
    """One SSE event."""

    data: dict[str, Any]
    id: str | None = None


class SseStream:
    """The events of one open GET stream, parsed from its lines."""

    def __init__(self, response: httpx.Response) -> None:
        self.response = response
        self._lines = response.aiter_lines()

    async def next(self) -> Event:
        """The next event (keepalive comments skipped)."""
        data: list[str] = []
        event_id = None
        with anyio.fail_after(TIMEOUT):
            async for line in self._lines:
                if line == "":
                    if data:
                        return Event(json.loads("\n".join(data)), event_id)
                    continue
                if line.startswith(":"):
                    continue
                name, _, value = line.partition(":")
                value = value[1:] if value.startswith(" ") else value
                if name == "data":
                    data.append(value)
                elif name == "id":
                    event_id = value
        raise EOFError("the stream ended")

    async def until(self, predicate: Any) -> list[Event]:
        """Every event up to and including the first one ``predicate`` accepts."""
        events = []
        while True:
            event = await self.next()
            events.append(event)
            if predicate(event.data):
                return events


@contextlib.asynccontextmanager
async def sse(
    client: httpx.AsyncClient,
    url: str,
    connection_id: str,
    session_id: str | None = None,
    **headers: str,
) -> AsyncIterator[SseStream]:
    """Open a GET stream (connection-scoped, or the session's)."""
    all_headers = {"accept": "text/event-stream", "acp-connection-id": connection_id}
    if session_id:
        all_headers["acp-session-id"] = session_id
    all_headers.update({k.replace("_", "-"): v for k, v in headers.items()})
    async with client.stream("GET", url, headers=all_headers) as response:
        assert response.status_code == 200, response.status_code
        yield SseStream(response)


def is_idle(data: dict[str, Any]) -> bool:
    """True for a ``state_update`` notification saying idle."""
    update = data.get("params", {}).get("update", {})
    return update.get("sessionUpdate") == "state_update" and update.get("state") == "idle"

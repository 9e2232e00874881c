"""``acp2.bridge.runner``: the direction chosen from the two ``initialize`` messages.

The client and the agent are raw JSON-RPC line peers on memory transports (``Wire``);
the bridge between them is the real ``run_bridge`` (and the real front / back bridges).
The subprocess tests of the command are in ``tests/cli/test_bridge_cmd.py``.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import pytest
from wire import TIMEOUT, ZED_INITIALIZE, Wire

from acp2.bridge.hello import read_hello
from acp2.bridge.passthrough import Copier
from acp2.bridge.runner import AgentGone, BadAnswer, run_bridge
from acp2.transport.memory import memory_pair

pytestmark = pytest.mark.anyio

V2_INITIALIZE: dict[str, Any] = {
    "protocolVersion": 2,
    "info": {"name": "a-v2-client", "version": "1"},
    "capabilities": {},
}
V2_RESULT: dict[str, Any] = {
    "protocolVersion": 2,
    "info": {"name": "lenient-v2-agent", "version": "1"},
    "capabilities": {"session": {"prompt": {}}},
}
V1_RESULT: dict[str, Any] = {
    "protocolVersion": 1,
    "agentInfo": {"name": "raw-v1-agent", "version": "1"},
    "agentCapabilities": {"loadSession": False},
}

Agent = Callable[[Wire], Awaitable[None]]


async def bridged(agent: Agent, client: Callable[[Wire], Awaitable[None]], **options: Any) -> Any:
    """Run ``run_bridge`` between ``client`` and ``agent`` (each a coroutine on a Wire);
    the client's end is closed when it returns. The bridge's end, or its exception."""
    client_end, bridge_client = memory_pair()
    agent_end, bridge_agent = memory_pair()
    outcome: list[Any] = []

    async def bridge() -> None:
        try:
            outcome.append(await run_bridge(bridge_client, bridge_agent, **options))
        except (AgentGone, BadAnswer) as exc:
            outcome.append(exc)
        await bridge_agent.aclose()

    with anyio.fail_after(TIMEOUT):
        async with anyio.create_task_group() as tg:
            tg.start_soon(bridge)
            tg.start_soon(agent, Wire(agent_end))
            await client(Wire(client_end))
            await client_end.aclose()
    return outcome[0]


async def answering(wire: Wire, results: dict[str, Any], seen: list[dict[str, Any]]) -> None:
    """A raw agent: answers each request by method from ``results`` until the end."""
    try:
        while True:
            frame = await wire.until(lambda m: "method" in m)
            seen.append(frame)
            if "id" in frame and frame["method"] in results:
                answer = {"jsonrpc": "2.0", "id": frame["id"], "result": results[frame["method"]]}
                await wire.transport.send(json.dumps(answer).encode() + b"\n")
    except AssertionError:  # the bridge closed the connection
        return


# -- the copier ---------------------------------------------------------------------------


def test_the_copier_forwards_whole_lines_byte_for_byte() -> None:
    copier = Copier()
    assert copier.feed(b'{"a": 1}\r\n{"b"') == b'{"a": 1}\r\n'
    assert copier.feed(b": 2}") == b""
    assert copier.feed(b"\n\n") == b'{"b": 2}\n\n'


def test_the_copier_drops_a_line_over_the_limit_and_resumes_after_it() -> None:
    copier = Copier(limit=8)
    assert copier.feed(b"0123456789") == b""
    assert copier.feed(b"abc\nok\n") == b"ok\n"
    assert copier.dropped == 1


# -- the client's initialize -------------------------------------------------------------


async def test_an_unreadable_version_is_answered_invalid_params_and_the_next_line_read() -> None:
    a, b = memory_pair()
    wire = Wire(a)
    with anyio.fail_after(TIMEOUT):
        await wire.send({"id": 1, "method": "initialize", "params": {"protocolVersion": "x"}})
        await wire.send({"id": 2, "method": "session/new", "params": {}})
        await wire.send({"id": 3, "method": "initialize", "params": ZED_INITIALIZE})
        hello = await read_hello(b)
        assert (await wire.answer(1))["error"]["code"] == -32602
        assert (await wire.answer(2))["error"]["code"] == -32600
    assert hello is not None
    assert (hello.version, hello.request_id) == (1, 3)


async def test_a_request_for_version_1_counts_as_v1_whatever_else_its_params_carry() -> None:
    # The same rule as acp2.bridge.peek (acp2 agent): acp2 check's version probe carries
    # both versions' fields and asks for 1.
    a, b = memory_pair()
    with anyio.fail_after(TIMEOUT):
        await Wire(a).send(
            {"id": 0, "method": "initialize", "params": V2_INITIALIZE | {"protocolVersion": 1}}
        )
        hello = await read_hello(b)
    assert hello is not None
    assert hello.version == 1


# -- choosing the direction ---------------------------------------------------------------


async def test_a_v1_client_and_an_agent_answering_v2_to_it_get_one_initialize() -> None:
    seen: list[dict[str, Any]] = []
    got: dict[str, Any] = {}

    async def client(wire: Wire) -> None:
        got["init"] = await wire.request("initialize", ZED_INITIALIZE)
        got["new"] = await wire.request("session/new", {"cwd": "/tmp", "mcpServers": []})

    results = {"initialize": V2_RESULT, "session/new": {"sessionId": "s1"}}
    end = await bridged(lambda w: answering(w, results, seen), client)

    assert end.mode == "front"
    assert [f["method"] for f in seen] == ["initialize", "session/new"]
    assert seen[0]["params"] == ZED_INITIALIZE  # the client's own request, unchanged
    result = got["init"]["result"]
    assert result["protocolVersion"] == 1
    assert result["agentInfo"]["name"] == "lenient-v2-agent"
    assert got["new"]["result"]["sessionId"] == "s1"


async def test_files_offer_fs_to_a_v1_agent_and_a_v2_client_gets_a_v2_answer() -> None:
    seen: list[dict[str, Any]] = []
    got: dict[str, Any] = {}

    async def client(wire: Wire) -> None:
        got["init"] = await wire.request("initialize", V2_INITIALIZE)

    end = await bridged(lambda w: answering(w, {"initialize": V1_RESULT}, seen), client, files=True)

    assert end.mode == "back"
    params = seen[0]["params"]
    assert params["info"] == V2_INITIALIZE["info"]  # v2's keys kept, v1's added
    assert params["clientCapabilities"]["fs"] == {"readTextFile": True, "writeTextFile": True}
    assert params["clientInfo"]["name"] == "a-v2-client"
    result = got["init"]["result"]
    assert (result["protocolVersion"], result["info"]["name"]) == (2, "raw-v1-agent")


async def test_same_versions_pass_frames_through_and_the_client_closing_ends_it() -> None:
    seen: list[dict[str, Any]] = []
    got: dict[str, Any] = {}

    async def client(wire: Wire) -> None:
        got["init"] = await wire.request("initialize", V2_INITIALIZE)
        await wire.send({"method": "_x/ping", "params": {"n": 1}})
        got["new"] = await wire.request("session/new", {"cwd": "/tmp", "mcpServers": []})

    results = {"initialize": V2_RESULT, "session/new": {"sessionId": "s1"}}
    end = await bridged(lambda w: answering(w, results, seen), client)

    assert (end.mode, end.first_closed) == ("pass-through", "client")
    assert [f.get("method") for f in seen] == ["initialize", "_x/ping", "session/new"]
    assert got["init"]["result"] == V2_RESULT


async def test_an_agent_closing_before_it_answers_raises_agent_gone() -> None:
    async def agent(wire: Wire) -> None:
        await wire.until(lambda m: "method" in m)
        await wire.transport.aclose()

    async def client(wire: Wire) -> None:
        await wire.send({"id": 0, "method": "initialize", "params": V2_INITIALIZE})

    outcome = await bridged(agent, client)

    assert isinstance(outcome, AgentGone)
    assert outcome.hello.request_id == 0

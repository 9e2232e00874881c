"""An acp2 agent serves a v1 client through the front bridge, and a v2 client as before.

Over real stdio (``acp2 test-agent``) and over in-memory pairs with the same agent
in process; every v1 frame the agent sends is checked against the vendored v1 schema.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, cast

import anyio
import pytest
from wire import TIMEOUT, ZED_INITIALIZE, Wire

import acp2.schema as v2
from acp2.bridge.front import FrontBridge, run_front
from acp2.bridge.turns import Turns
from acp2.errors import RequestError
from acp2.rpc import Later
from acp2.testing.scenarios import build_test_agent
from acp2.transport.memory import memory_pair
from acp2.transport.stdio import spawn_agent
from helpers.inprocess import serving
from interop.v1_schema import validate_v1_frame

pytestmark = pytest.mark.anyio

TEST_AGENT = [sys.executable, "-m", "acp2", "test-agent"]


def v1_problems(wire: Wire) -> list[str]:
    problems = []
    for frame in wire.frames:
        problems += validate_v1_frame(frame, "agent", dict(wire.asked))
    return problems


@asynccontextmanager
async def in_process() -> AsyncIterator[Wire]:
    """The test agent serving one end of a memory pair; a Wire on the other."""
    async with serving(build_test_agent(), wait=True) as agents:
        yield Wire(agents.open())


async def v1_session(wire: Wire) -> str:
    await wire.request("initialize", ZED_INITIALIZE)
    new = await wire.request("session/new", {"cwd": "/tmp", "mcpServers": []})
    session_id: str = new["result"]["sessionId"]
    return session_id


async def test_a_zed_shaped_v1_initialize_over_stdio_is_answered_in_valid_v1() -> None:
    async with spawn_agent(TEST_AGENT, grace=TIMEOUT) as process:
        wire = Wire(process)
        answer = await wire.request("initialize", ZED_INITIALIZE)
        await process.aclose()

    result = answer["result"]
    assert result["protocolVersion"] == 1
    assert result["agentInfo"]["name"] == "acp2-test-agent"
    assert result["agentCapabilities"]["loadSession"] is True
    assert {"promptCapabilities", "mcpCapabilities"} <= set(result["agentCapabilities"])
    assert result["authMethods"] == []
    assert v1_problems(wire) == []


def test_a_v1_initialize_piped_in_before_stdin_closes_is_still_answered() -> None:
    # A script or probe writes one line and closes its end: the answer must not be
    # cancelled by the end of input (the v2 path answers it the same way).
    line = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": ZED_INITIALIZE})
    done = subprocess.run(
        TEST_AGENT, input=line + "\n", capture_output=True, text=True, timeout=4 * TIMEOUT
    )
    answers = [json.loads(out) for out in done.stdout.splitlines()]
    assert [a.get("result", {}).get("protocolVersion") for a in answers] == [1]
    assert done.returncode == 0


async def test_a_v2_client_over_stdio_is_served_v2_unchanged_by_the_peek() -> None:
    async with spawn_agent(TEST_AGENT, grace=TIMEOUT) as process:
        wire = Wire(process)
        init = {"protocolVersion": 2, "info": {"name": "c", "version": "1"}, "capabilities": {}}
        answer = await wire.request("initialize", init)
        new = await wire.request("session/new", {"cwd": "/tmp", "mcpServers": []})
        sid = new["result"]["sessionId"]
        prompt = [{"type": "text", "text": "echo hi"}]
        accepted = await wire.request("session/prompt", {"sessionId": sid, "prompt": prompt})
        await wire.until(
            lambda f: (
                f.get("method") == "session/update" and f["params"]["update"].get("state") == "idle"
            )
        )
        await process.aclose()

    assert answer["result"]["protocolVersion"] == 2
    assert answer["result"]["info"]["name"] == "acp2-test-agent"
    assert "messageId" in accepted["result"]
    assert [u["state"] for u in wire.updates("state_update")][-2:] == ["running", "idle"]


async def test_a_malformed_initialize_gets_invalid_params_and_the_connection_stays_open() -> None:
    async with in_process() as wire:
        bad = await wire.request("initialize", {"protocolVersion": "one"})
        good = await wire.request("initialize", ZED_INITIALIZE)

    assert bad["error"]["code"] == -32602
    assert good["result"]["protocolVersion"] == 1


async def test_session_load_sends_the_projected_replay_before_its_answer() -> None:
    async with in_process() as wire:
        sid = await v1_session(wire)
        prompt = [{"type": "text", "text": "echo one two"}]
        answered = await wire.request("session/prompt", {"sessionId": sid, "prompt": prompt})
        wire.frames.clear()
        load = {"sessionId": sid, "cwd": "/tmp", "mcpServers": []}
        loaded = await wire.request("session/load", load)

    assert answered["result"] == {"stopReason": "end_turn"}
    assert "result" in loaded
    kinds = [u["sessionUpdate"] for u in wire.updates()]
    assert kinds[:1] == ["user_message_chunk"], kinds
    replayed = "".join(u["content"]["text"] for u in wire.updates("agent_message_chunk"))
    assert replayed == "one two"
    assert "state_update" not in kinds
    assert v1_problems(wire) == []


async def test_session_cancel_answers_the_held_prompt_cancelled() -> None:
    async with in_process() as wire:
        sid = await v1_session(wire)
        prompt = [{"type": "text", "text": "wait"}]
        params = {"sessionId": sid, "prompt": prompt}
        # Back to back: the cancel must reach the agent after the prompt it cancels.
        await wire.send({"id": 99, "method": "session/prompt", "params": params})
        await wire.send({"method": "session/cancel", "params": {"sessionId": sid}})
        answer = await wire.answer(99)

    assert answer["result"] == {"stopReason": "cancelled"}
    assert v1_problems(wire) == []


async def test_a_cancel_request_for_a_held_prompt_answers_it_and_the_session_goes_on() -> None:
    async with in_process() as wire:
        sid = await v1_session(wire)
        wait = {"sessionId": sid, "prompt": [{"type": "text", "text": "wait"}]}
        await wire.send({"id": 41, "method": "session/prompt", "params": wait})
        await wire.until(lambda m: m.get("method") == "session/update")  # held now
        await wire.send({"method": "$/cancel_request", "params": {"requestId": 41}})
        cancelled = await wire.answer(41)
        await wire.send({"method": "session/cancel", "params": {"sessionId": sid}})
        stop = {"sessionId": sid, "prompt": [{"type": "text", "text": "stop max_tokens"}]}
        after = await wire.request("session/prompt", stop)

    assert cancelled["error"]["code"] == -32800
    assert after["result"] == {"stopReason": "max_tokens"}  # the old idle answered nothing
    assert [f["id"] for f in wire.frames if f.get("id") == 41] == [41]  # answered once
    assert v1_problems(wire) == []


@pytest.mark.parametrize("reason", ["end_turn", "max_tokens", "refusal"])
async def test_each_stop_reason_of_the_idle_answers_the_held_prompt(reason: str) -> None:
    async with in_process() as wire:
        sid = await v1_session(wire)
        params = {"sessionId": sid, "prompt": [{"type": "text", "text": f"stop {reason}"}]}
        answered = await wire.request("session/prompt", params)

    assert answered["result"] == {"stopReason": reason}
    assert wire.updates("state_update") == []  # v1 has no foreground state
    assert v1_problems(wire) == []


async def test_a_turn_that_fails_answers_its_held_prompt_with_the_error() -> None:
    async with in_process() as wire:
        sid = await v1_session(wire)
        params = {"sessionId": sid, "prompt": [{"type": "text", "text": "fail"}]}
        answered = await wire.request("session/prompt", params)
        after = await wire.request(
            "session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "hi"}]}
        )

    assert "error" in answered
    assert "result" not in answered
    assert after["result"] == {"stopReason": "end_turn"}


async def test_the_prompt_is_answered_after_every_update_of_its_turn() -> None:
    async with in_process() as wire:
        sid = await v1_session(wire)
        wire.frames.clear()
        prompt = [{"type": "text", "text": "echo a b c"}]
        answer = await wire.request("session/prompt", {"sessionId": sid, "prompt": prompt})

    assert answer["result"] == {"stopReason": "end_turn"}
    texts = [u["content"]["text"] for u in wire.updates("agent_message_chunk")]
    assert "".join(texts) == "a b c"
    assert wire.updates("user_message_chunk") == [], "the client's own prompt was echoed"


async def test_updates_sent_right_after_session_new_follow_its_answer() -> None:
    async with in_process() as wire:
        await wire.request("initialize", ZED_INITIALIZE)
        new = await wire.request("session/new", {"cwd": "/tmp", "mcpServers": []})
        commands = await wire.until(lambda f: f.get("method") == "session/update")

    assert wire.frames.index(new) < wire.frames.index(commands)
    assert commands["params"]["sessionId"] == new["result"]["sessionId"]
    assert commands["params"]["update"]["sessionUpdate"] == "available_commands_update"
    assert v1_problems(wire) == []


async def test_session_list_is_answered_in_v1_shape() -> None:
    async with in_process() as wire:
        sid = await v1_session(wire)
        listed = await wire.request("session/list", {})

    assert sid in [s["sessionId"] for s in listed["result"]["sessions"]]
    assert v1_problems(wire) == []


async def test_run_front_joins_two_transports_and_returns_what_v1_could_not_carry() -> None:
    agent = build_test_agent()
    v2_client, v2_agent = memory_pair()
    v1_editor, v1_bridge = memory_pair()
    dropped: list[Counter[str]] = []

    async def bridge() -> None:
        dropped.append(await run_front(v1_bridge, v2_client))

    async with anyio.create_task_group() as tg:
        tg.start_soon(agent.serve, v2_agent)
        tg.start_soon(bridge)
        wire = Wire(v1_editor)
        sid = await v1_session(wire)
        prompt = [{"type": "text", "text": "echo hi"}]
        await wire.request("session/prompt", {"sessionId": sid, "prompt": prompt})
        await v1_editor.aclose()

    (counts,) = dropped
    assert counts["state_update"] >= 2  # running and idle: the prompt's answer says it
    assert counts["user_message.ack"] == 1


def test_a_turns_idle_answers_its_prompt_in_the_call_that_delivers_it() -> None:
    turns = Turns()
    answered: list[v2.StateUpdate] = []
    idle = v2.StateUpdate(state="idle", stop_reason="end_turn")
    turns.answer("m1", answered.append)
    turns.observe(v2.UserMessage(message_id="m1"))
    turns.observe(v2.StateUpdate(state="running"))
    assert answered == []
    turns.observe(idle)
    assert answered == [idle]


def test_an_idle_that_came_first_answers_at_once_and_a_given_up_prompt_is_not_answered() -> None:
    turns = Turns()
    early = v2.StateUpdate(state="idle", stop_reason="end_turn")
    turns.observe(v2.UserMessage(message_id="m1"))
    turns.observe(early)
    answered: list[v2.StateUpdate] = []
    turns.answer("m1", answered.append)
    turns.answer("m2", answered.append)
    turns.give_up("m2")
    turns.observe(v2.UserMessage(message_id="m2"))
    turns.observe(v2.StateUpdate(state="idle", stop_reason="cancelled"))
    assert answered == [early]


def test_an_idle_the_bridge_cannot_read_still_answers_its_prompt_with_an_internal_error() -> None:
    bridge = FrontBridge(cast(Any, None), cast(Any, None), cast(Any, None))
    later: Later[Any] = Later()
    answers: list[RequestError | None] = []
    later.bind(lambda _result, error: answers.append(error))
    bridge._answer_prompt(later, cast(Any, object()))  # no stop reason to read
    assert [error.code if error else None for error in answers] == [-32603]


async def test_a_v1_clients_extension_request_reaches_the_agents_extension_handler() -> None:
    agent = build_test_agent()

    @agent.ext_method("_test/echo")
    async def echo(params: Any) -> Any:
        return {"echoed": json.loads(bytes(params))}

    async with serving(agent, wait=True) as agents:
        wire = Wire(agents.open())
        await wire.request("initialize", ZED_INITIALIZE)
        answer = await wire.request("_test/echo", {"n": 1})
        unknown = await wire.request("_test/nobody", {})
    assert answer["result"] == {"echoed": {"n": 1}}
    assert unknown["error"]["code"] == -32601

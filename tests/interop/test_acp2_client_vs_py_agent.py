"""acp2's client API and ``acp2 run`` against the official Python SDK 1.0.0rc3 v2 agent.

The agent (``py/v2_agent.py``, on ``acp.experimental.v2``) runs behind the wire tap;
every frame of each log, both directions, must be valid under the Aug and the Nov
schema, and the tests read the wire to check what acp2 sent: the permission answer,
the cancel before the idle, the one ``cancelled`` answer to a withdrawn permission.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp2.client import PermissionRequest, allow_all, connect, deny_all
from acp2.schema import Diff, StateUpdate
from helpers.timeouts import SCENARIO_TIMEOUT as TIMEOUT

from .peers import py_agent_argv, tap_argv
from .test_acp2_client_vs_ts_agent import (
    agent_requests,
    client_answers,
    index,
    is_sent,
    is_state,
    states,
    valid_wire,
)
from .wire import selected, session_updates

pytestmark = pytest.mark.interop


def py_agent(python: Path, log: Path) -> list[str]:
    return tap_argv(log, py_agent_argv(python))


@pytest.mark.anyio
async def test_client_echo(py_sdk_v2: Path, tmp_path: Path) -> None:
    log = tmp_path / "wire.jsonl"
    with anyio.fail_after(TIMEOUT):
        async with connect(py_agent(py_sdk_v2, log), cwd=tmp_path) as client:
            assert client.agent_info.name == "acp2-interop-py-agent"
            assert client.protocol_version == 2
            session = await client.new_session()
            work = await session.prompt("echo hello world")
            assert await work.wait() == "end_turn"
            assert work.text == "hello world"
            assert session.state.foreground == "idle"

    frames = valid_wire(log)
    users = [u for u in session_updates(frames) if u["sessionUpdate"] == "user_message"]
    assert [u["messageId"] for u in users] == [work.message_id]
    assert states(frames) == ["running", "idle"]


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("policy", "kind", "status", "text"),
    [
        pytest.param(allow_all, "allow_once", "completed", "edited hello.txt", id="allow"),
        pytest.param(deny_all, "reject_once", "failed", "", id="deny"),
    ],
)
async def test_client_tools(
    py_sdk_v2: Path, tmp_path: Path, policy: Any, kind: str, status: str, text: str
) -> None:
    log = tmp_path / "wire.jsonl"
    with anyio.fail_after(TIMEOUT):
        async with connect(py_agent(py_sdk_v2, log), cwd=tmp_path, permissions=policy) as client:
            session = await client.new_session()
            work = await session.prompt("tools")
            assert await work.wait() == "end_turn"
            assert work.text == text
            (call,) = session.state.tool_calls.values()
            assert (call.status, call.kind, call.name) == (status, "edit", "edit_file")
            if status == "completed":
                assert any(isinstance(c, Diff) for c in call.content)
                (terminal,) = session.state.terminals.values()
                assert bytes(terminal.output) == b"hello, world\n"
                assert terminal.exit_status.exit_code == 0

    frames = valid_wire(log)
    (asked,) = agent_requests(frames, "session/request_permission")
    (option,) = [o for o in asked["params"]["options"] if o["kind"] == kind]
    (answer,) = client_answers(frames, asked["id"])
    assert answer["result"] == selected(option["optionId"], implicit=policy is deny_all)
    # The agent reports requires_action just before it asks.
    assert states(frames) == ["running", "requires_action", "running", "idle"]


@pytest.mark.anyio
async def test_client_cancel_mid_turn(py_sdk_v2: Path, tmp_path: Path) -> None:
    log = tmp_path / "wire.jsonl"
    with anyio.fail_after(TIMEOUT):
        async with connect(py_agent(py_sdk_v2, log), cwd=tmp_path) as client:
            session = await client.new_session()
            work = await session.prompt("wait")
            async for update in work:
                if isinstance(update, StateUpdate) and update.state == "running":
                    break
            assert await work.cancel() == "cancelled"
            assert session.state.stop_reason == "cancelled"
            again = await session.prompt("echo again")
            assert await again.wait() == "end_turn"
            assert again.text == "again"

    frames = valid_wire(log)
    cancel = index(frames, is_sent("session/cancel"))
    assert 0 < cancel < index(frames, is_state("idle", "cancelled"))
    assert [u.get("stopReason") for u in session_updates(frames) if u.get("state") == "idle"] == [
        "cancelled",
        "end_turn",
    ]


@pytest.mark.anyio
async def test_client_answers_the_permission_of_a_cancelled_turn_once(
    py_sdk_v2: Path, tmp_path: Path
) -> None:
    """session/cancel during a permission wait: acp2 answers the request once, with
    outcome cancelled. Whether the SDK also withdraws it with $/cancel_request (D-15)
    depends on which arrives first: acp2's answer or the cancel that cancels the
    turn's task; either way at most once."""
    log = tmp_path / "wire.jsonl"
    asked = anyio.Event()

    async def hold(request: PermissionRequest) -> None:
        asked.set()
        await anyio.sleep_forever()  # a user who never answers

    with anyio.fail_after(TIMEOUT):
        async with connect(py_agent(py_sdk_v2, log), cwd=tmp_path, permissions=hold) as client:
            session = await client.new_session()
            work = await session.prompt("tools")
            await asked.wait()
            await session.cancel()
            assert await work.wait() == "cancelled"
            (call,) = session.state.tool_calls.values()
            assert call.status == "cancelled"
            again = await session.prompt("echo after")
            assert await again.wait() == "end_turn"

    frames = valid_wire(log)
    (request,) = agent_requests(frames, "session/request_permission")
    answers = client_answers(frames, request["id"])
    assert [a.get("result") for a in answers] == [{"outcome": {"outcome": "cancelled"}}]
    withdrawn = [f for f in frames if f.method == "$/cancel_request" and f.sender == "agent"]
    assert [f.message["params"] for f in withdrawn] in ([], [{"requestId": request["id"]}])
    cancel = index(frames, is_sent("session/cancel"))
    assert 0 < cancel < index(frames, is_state("idle", "cancelled"))


@pytest.mark.anyio
async def test_client_resume_with_replay_and_list(py_sdk_v2: Path, tmp_path: Path) -> None:
    log = tmp_path / "wire.jsonl"
    with anyio.fail_after(TIMEOUT):
        async with connect(py_agent(py_sdk_v2, log), cwd=tmp_path) as client:
            first = await client.new_session()
            assert await (await first.prompt("echo first")).wait() == "end_turn"
            await first.close()
            resumed = await client.resume(first.id, replay=True)
            texts = sorted(m.text for m in resumed.state.messages.values())
            assert texts == ["echo first", "first"]
            work = await resumed.prompt("echo second")
            assert await work.wait() == "end_turn"
            listed = await client.list_sessions(cwd=tmp_path)
            assert [s.session_id for s in listed] == [first.id]

    valid_wire(log)


# ---------------------------------------------------------------- acp2 run


def acp2_run(
    tmp_path: Path, python: Path, prompt: str, *options: str
) -> tuple[subprocess.CompletedProcess[str], Path]:
    log = tmp_path / "wire.jsonl"
    argv = [sys.executable, "-m", "acp2", "run", "--cwd", str(tmp_path)]
    argv += ["--timeout", str(TIMEOUT), *options, prompt, "--", *py_agent(python, log)]
    done = subprocess.run(
        argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=TIMEOUT + 15
    )
    return done, log


def test_acp2_run_echo(py_sdk_v2: Path, tmp_path: Path) -> None:
    done, log = acp2_run(tmp_path, py_sdk_v2, "echo hello world")

    assert done.returncode == 0, done.stderr
    assert done.stdout == "hello world\n"
    valid_wire(log)


@pytest.mark.parametrize(
    ("permission", "kind", "status"),
    [("allow", "allow_once", "completed"), ("deny", "reject_once", "failed")],
)
def test_acp2_run_tools(
    py_sdk_v2: Path, tmp_path: Path, permission: str, kind: str, status: str
) -> None:
    done, log = acp2_run(tmp_path, py_sdk_v2, "tools", "--permission", permission)

    assert done.returncode == 0, done.stderr
    frames = valid_wire(log)
    (asked,) = agent_requests(frames, "session/request_permission")
    (answer,) = client_answers(frames, asked["id"])
    chosen = answer["result"]["outcome"]["optionId"]
    assert [o["kind"] for o in asked["params"]["options"] if o["optionId"] == chosen] == [kind]
    tool = [u for u in session_updates(frames) if u["sessionUpdate"] == "tool_call_update"]
    assert tool[-1]["status"] == status


def test_acp2_run_cancel_mid_turn(py_sdk_v2: Path, tmp_path: Path) -> None:
    done, log = acp2_run(tmp_path, py_sdk_v2, "wait", "--cancel-after", "1")

    assert done.returncode == 1, done.stderr
    assert "cancelled" in done.stderr
    frames = valid_wire(log)
    assert 0 < index(frames, is_sent("session/cancel")) < index(frames, is_state("idle"))
    assert states(frames)[-1] == "idle"

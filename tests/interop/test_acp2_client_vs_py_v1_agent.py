"""acp2's client API and ``acp2 run`` against the official Python SDK 0.12.1 v1 agent.

The agent (``py/v1_agent.py``) speaks ACP v1; acp2's client asks for 2, reads the v1
answer and drives the agent through the back bridge (``acp2.bridge.back``) with the
same ``ClientSession`` / ``Work`` API as for a v2 agent. Every frame on the wire, both
directions, must be valid under the vendored v1 schema.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp2.client import allow_all, connect, deny_all
from acp2.schema import Diff
from helpers.timeouts import SCENARIO_TIMEOUT as TIMEOUT

from .peers import py_agent_argv, tap_argv
from .test_acp2_client_vs_ts_agent import agent_requests, client_answers, index, is_sent
from .v1_expectations import (
    acp2_run,
    cancel_during_permission,
    cancel_mid_turn,
    check_selected,
    stop_reasons,
    valid_v1_wire,
)
from .wire import selected

pytestmark = pytest.mark.interop


def v1_agent(python: Path, log: Path) -> list[str]:
    return tap_argv(log, py_agent_argv(python, "v1"))


@pytest.mark.anyio
async def test_client_drives_a_v1_agent_through_an_echo_turn(
    py_sdk_v1: Path, tmp_path: Path
) -> None:
    log = tmp_path / "wire.jsonl"
    with anyio.fail_after(TIMEOUT):
        async with connect(v1_agent(py_sdk_v1, log), cwd=tmp_path) as client:
            assert client.agent_info.name == "acp2-interop-py-v1-agent"
            assert client.protocol_version == 2  # the bridge presents the agent as v2
            session = await client.new_session()
            work = await session.prompt("echo hello world")
            assert await work.wait() == "end_turn"
            assert work.text == "hello world"
            assert work.message_id is not None
            assert session.state.foreground == "idle"
            (user,) = [m for m in session.state.messages.values() if m.kind == "user"]
            assert user.text == "echo hello world"
            assert user.message_id == work.message_id

    frames = valid_v1_wire(log)
    assert stop_reasons(frames) == ["end_turn"]


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("policy", "kind", "status", "text"),
    [
        pytest.param(allow_all, "allow_once", "completed", "edited hello.txt", id="allow"),
        pytest.param(deny_all, "reject_once", "failed", "", id="deny"),
    ],
)
async def test_client_answers_a_v1_agents_permission_request(
    py_sdk_v1: Path, tmp_path: Path, policy: Any, kind: str, status: str, text: str
) -> None:
    log = tmp_path / "wire.jsonl"
    with anyio.fail_after(TIMEOUT):
        async with connect(v1_agent(py_sdk_v1, log), cwd=tmp_path, permissions=policy) as client:
            session = await client.new_session()
            work = await session.prompt("tools")
            assert await work.wait() == "end_turn"
            assert work.text == text
            (call,) = session.state.tool_calls.values()
            assert (call.status, call.kind) == (status, "edit")
            if status == "completed":
                assert any(isinstance(c, Diff) for c in call.content)

    check_selected(valid_v1_wire(log), kind, implicit=policy is deny_all)


@pytest.mark.anyio
async def test_cancel_mid_turn_ends_the_v1_turn_cancelled(py_sdk_v1: Path, tmp_path: Path) -> None:
    log = tmp_path / "wire.jsonl"

    await cancel_mid_turn(v1_agent(py_sdk_v1, log), tmp_path, log)


@pytest.mark.anyio
async def test_cancel_during_a_v1_permission_wait_answers_it_cancelled(
    py_sdk_v1: Path, tmp_path: Path
) -> None:
    log = tmp_path / "wire.jsonl"

    await cancel_during_permission(v1_agent(py_sdk_v1, log), tmp_path, log)


@pytest.mark.anyio
async def test_a_v1_prompt_error_ends_the_work_with_stop_reason_error(
    py_sdk_v1: Path, tmp_path: Path
) -> None:
    log = tmp_path / "wire.jsonl"
    with anyio.fail_after(TIMEOUT):
        async with connect(v1_agent(py_sdk_v1, log), cwd=tmp_path) as client:
            session = await client.new_session()
            work = await session.prompt("fail")
            assert await work.wait() == "error"
            assert work.text == "failing on purpose"

    valid_v1_wire(log)


@pytest.mark.anyio
async def test_resume_with_replay_loads_the_v1_session(py_sdk_v1: Path, tmp_path: Path) -> None:
    log = tmp_path / "wire.jsonl"
    with anyio.fail_after(TIMEOUT):
        async with connect(v1_agent(py_sdk_v1, log), cwd=tmp_path) as client:
            first = await client.new_session()
            assert await (await first.prompt("echo first")).wait() == "end_turn"
            resumed = await client.resume(first.id, replay=True)
            texts = sorted(m.text for m in resumed.state.messages.values())
            assert texts == ["echo first", "first"]
            work = await resumed.prompt("echo second")
            assert await work.wait() == "end_turn"

    frames = valid_v1_wire(log)
    assert index(frames, is_sent("session/load")) > 0


# ---------------------------------------------------------------- acp2 run


def run_v1(
    tmp_path: Path, python: Path, prompt: str, *options: str
) -> tuple[subprocess.CompletedProcess[str], Path]:
    log = tmp_path / "wire.jsonl"
    return acp2_run(tmp_path, v1_agent(python, log), prompt, *options), log


def test_acp2_run_prints_a_v1_agents_answer(py_sdk_v1: Path, tmp_path: Path) -> None:
    done, log = run_v1(tmp_path, py_sdk_v1, "echo hello world")

    assert done.returncode == 0, done.stderr
    assert done.stdout == "hello world\n"
    valid_v1_wire(log)


@pytest.mark.parametrize(
    ("permission", "option", "text"),
    [("allow", "allow", "edited hello.txt\n"), ("deny", "reject", "")],
)
def test_acp2_run_answers_a_v1_agents_permission(
    py_sdk_v1: Path, tmp_path: Path, permission: str, option: str, text: str
) -> None:
    done, log = run_v1(tmp_path, py_sdk_v1, "tools", "--permission", permission)

    assert done.returncode == 0, done.stderr
    assert done.stdout == text
    frames = valid_v1_wire(log)
    (asked,) = agent_requests(frames, "session/request_permission")
    (answer,) = client_answers(frames, asked["id"])
    assert answer["result"] == selected(option, implicit=permission == "deny")


def test_acp2_run_cancels_a_v1_turn(py_sdk_v1: Path, tmp_path: Path) -> None:
    done, log = run_v1(tmp_path, py_sdk_v1, "wait", "--cancel-after", "1")

    assert done.returncode == 1, done.stderr
    assert "cancelled" in done.stderr
    assert done.stdout == "waiting\n"
    frames = valid_v1_wire(log)
    assert index(frames, is_sent("session/cancel")) > 0
    assert stop_reasons(frames) == ["cancelled"]

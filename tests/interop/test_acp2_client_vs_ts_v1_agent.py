"""acp2's client API and ``acp2 run`` against the TypeScript SDK 2.4.0 stable (ACP v1)
agent (``ts/v1_agent.mjs``).

acp2's client asks for 2, reads the v1 answer and drives the agent through the back
bridge (``acp2.bridge.back``) with the ``ClientSession`` / ``Work`` / ``SessionState``
API of a v2 agent: the user message gets a client-made ``messageId``, a turn is
``running`` once sent and ``idle`` with the stop reason of the ``session/prompt``
answer. Every frame on the wire, both directions, must be valid under the vendored v1
schema; the tests read the wire for what acp2 answered.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from acp2.client import PermissionRequest, allow_all, connect, deny_all
from acp2.schema import Diff, PermissionOption
from helpers.timeouts import SCENARIO_TIMEOUT as TIMEOUT

from .peers import tap_argv, ts_v1_agent_argv
from .test_acp2_client_vs_ts_agent import agent_requests, client_answers, index, is_sent
from .v1_expectations import (
    acp2_run,
    cancel_during_permission,
    cancel_mid_turn,
    check_selected,
    stop_reasons,
    valid_v1_wire,
)

pytestmark = pytest.mark.interop


def v1_agent(ts_sdk: Path, log: Path) -> list[str]:
    return tap_argv(log, ts_v1_agent_argv(ts_sdk))


def texts(state: Any, kind: str) -> list[str]:
    return [m.text for m in state.messages.values() if m.kind == kind]


@pytest.mark.anyio
async def test_client_reduces_v1_text_thought_and_plan_turns_into_the_v2_view(
    ts_sdk: Path, tmp_path: Path
) -> None:
    log = tmp_path / "wire.jsonl"
    with anyio.fail_after(TIMEOUT):
        async with connect(v1_agent(ts_sdk, log), cwd=tmp_path) as client:
            assert client.agent_info.name == "acp2-interop-ts-v1-agent"
            assert client.protocol_version == 2  # the bridge presents the agent as v2
            session = await client.new_session()
            work = await session.prompt("echo hello world")
            assert await work.wait() == "end_turn"
            assert work.text == "hello world"
            (user,) = [m for m in session.state.messages.values() if m.kind == "user"]
            assert (user.text, user.message_id) == ("echo hello world", work.message_id)
            kinds = await session.prompt("kinds")
            assert await kinds.wait() == "end_turn"
            state = session.state
            assert texts(state, "thought") == ["thinking"]
            (plan,) = state.plans.values()
            assert [e.status for e in plan.plan.entries] == ["completed", "in_progress"]
            assert [c.name for c in state.available_commands] == ["help"]
            no_fs = await session.prompt("read hello.txt")  # acp2 offered no fs
            assert await no_fs.wait() == "end_turn"
            assert no_fs.text == "no fs"
            assert (state.foreground, state.work, state.completed) == ("idle", 3, 3)

    assert stop_reasons(valid_v1_wire(log)) == ["end_turn"] * 3


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("policy", "kind", "status", "text"),
    [
        pytest.param(allow_all, "allow_once", "completed", "edited hello.txt", id="allow"),
        pytest.param(deny_all, "reject_once", "failed", "", id="deny"),
    ],
)
async def test_client_answers_a_ts_v1_agents_permission_request(
    ts_sdk: Path, tmp_path: Path, policy: Any, kind: str, status: str, text: str
) -> None:
    log = tmp_path / "wire.jsonl"
    with anyio.fail_after(TIMEOUT):
        async with connect(v1_agent(ts_sdk, log), cwd=tmp_path, permissions=policy) as client:
            session = await client.new_session()
            work = await session.prompt("tools")
            assert await work.wait() == "end_turn"
            assert work.text == text
            assert texts(session.state, "thought") == ["planning an edit"]
            (call,) = session.state.tool_calls.values()
            assert (call.status, call.kind, call.title) == (status, "edit", "Edit hello.txt")
            assert any(isinstance(c, Diff) for c in call.content) == (status == "completed")

    check_selected(valid_v1_wire(log), kind, implicit=policy is deny_all)


def keep_only_kept_txt(request: PermissionRequest) -> PermissionOption | None:
    """Allow the write of ``kept.txt``, refuse every other permission."""
    return (allow_all if request.title.endswith("/kept.txt") else deny_all)(request)


@pytest.mark.anyio
async def test_client_with_files_serves_a_ts_v1_agents_fs_requests(
    ts_sdk: Path, tmp_path: Path
) -> None:
    log = tmp_path / "wire.jsonl"
    (tmp_path / "hello.txt").write_text("hello from the workspace\n")
    with anyio.fail_after(TIMEOUT):
        async with connect(
            v1_agent(ts_sdk, log), cwd=tmp_path, files=True, permissions=keep_only_kept_txt
        ) as client:
            session = await client.new_session()
            work = await session.prompt("read hello.txt")
            assert await work.wait() == "end_turn"
            assert work.text == "hello from the workspace\n"
            (call,) = session.state.tool_calls.values()
            assert (call.kind, call.status) == ("read", "completed")
            # Sent while the previous turn may still run: the bridge holds each prompt
            # until the v1 agent answered the one before (v1 takes one at a time).
            replies = [await session.prompt(words) for words in WORDS]
            assert [(await w.wait(), w.text) for w in replies] == list(WORDS.values())

    assert (tmp_path / "kept.txt").read_text() == "written by ts-v1-agent\n"
    assert not (tmp_path / "refused.txt").exists()
    frames = valid_v1_wire(log)
    found, absent = agent_requests(frames, "fs/read_text_file")
    assert found["params"]["path"] == str(tmp_path / "hello.txt")
    assert client_answers(frames, found["id"])[0]["result"] == {
        "content": "hello from the workspace\n"
    }
    assert client_answers(frames, absent["id"])[0]["error"]["code"] == -32002
    kept, refused = agent_requests(frames, "fs/write_text_file")
    assert client_answers(frames, kept["id"])[0]["result"] in ({}, None)
    assert client_answers(frames, refused["id"])[0]["error"]["code"] == -32600


#: The fs prompts after the first read, and how acp2's client answers them (as the agent
#: says): a missing file is -32002; a write asks the permission policy first.
WORDS = {
    "read missing.txt": ("end_turn", "could not read missing.txt: -32002"),
    "write kept.txt": ("end_turn", "wrote kept.txt"),
    "write refused.txt": ("end_turn", "could not write refused.txt: -32600"),
}


@pytest.mark.anyio
async def test_cancel_mid_turn_ends_the_ts_v1_turn_cancelled(ts_sdk: Path, tmp_path: Path) -> None:
    log = tmp_path / "wire.jsonl"

    await cancel_mid_turn(v1_agent(ts_sdk, log), tmp_path, log)


@pytest.mark.anyio
async def test_cancel_during_a_ts_v1_permission_wait_answers_it_cancelled(
    ts_sdk: Path, tmp_path: Path
) -> None:
    log = tmp_path / "wire.jsonl"

    await cancel_during_permission(v1_agent(ts_sdk, log), tmp_path, log)


@pytest.mark.anyio
async def test_a_ts_v1_prompt_error_ends_the_work_with_stop_reason_error_and_resume_loads(
    ts_sdk: Path, tmp_path: Path
) -> None:
    log = tmp_path / "wire.jsonl"
    with anyio.fail_after(TIMEOUT):
        async with connect(v1_agent(ts_sdk, log), cwd=tmp_path) as client:
            first = await client.new_session()
            failed = await first.prompt("fail")
            assert await failed.wait() == "error"
            assert failed.text == "failing on purpose"
            assert await (await first.prompt("echo first")).wait() == "end_turn"
            resumed = await client.resume(first.id, replay=True)
            assert sorted(texts(resumed.state, "user")) == ["echo first", "fail"]
            assert sorted(texts(resumed.state, "agent")) == ["failing on purpose", "first"]
            work = await resumed.prompt("echo second")
            assert await work.wait() == "end_turn"

    frames = valid_v1_wire(log)
    assert index(frames, is_sent("session/load")) > 0
    assert stop_reasons(frames) == ["end_turn", "end_turn"]


# ---------------------------------------------------------------- acp2 run


def test_acp2_run_answers_a_ts_v1_agents_permission(ts_sdk: Path, tmp_path: Path) -> None:
    log = tmp_path / "wire.jsonl"

    done = acp2_run(tmp_path, v1_agent(ts_sdk, log), "tools", "--permission", "allow")

    assert done.returncode == 0, done.stderr
    assert done.stdout == "edited hello.txt\n"
    frames = valid_v1_wire(log)
    check_selected(frames, "allow_once")
    assert stop_reasons(frames) == ["end_turn"]

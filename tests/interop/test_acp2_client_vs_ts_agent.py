"""acp2's client API and ``acp2 run`` against the official TypeScript SDK 2.4.0 v2 agent.

The TS agent (``ts/agent.mjs``) runs behind the wire tap; after each test every frame
of the log, both directions, must be valid under the Aug and the Nov schema, and the
test reads the wire to check what acp2 sent (permission answers, cancel order, resume
parameters) and that what it hands to its caller is what arrived.

``acp2 run`` is started as a subprocess (``python -m acp2 run``); its agent command may
itself contain ``--`` (the tap's own separator).
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import msgspec
import pytest

import schema_validation
from acp2.client import PermissionRequest, allow_all, connect, deny_all
from acp2.schema import AgentMessageChunk, Diff, StateUpdate
from helpers import timeouts
from helpers.timeouts import SCENARIO_TIMEOUT as TIMEOUT

from .peers import tap_argv, ts_agent_argv
from .wire import AGENT_TO_CLIENT, Frame, read_log, selected, session_updates

pytestmark = pytest.mark.interop


# ---------------------------------------------------------------- wire helpers


def valid_wire(log: Path) -> list[Frame]:
    """The tapped frames, after asserting each is valid under both drafts."""
    result = schema_validation.check_log(log)
    assert result.problems == []
    assert not result.sampled
    return read_log(log)


def agent_requests(frames: list[Frame], method: str) -> list[dict[str, Any]]:
    return [
        f.message
        for f in frames
        if f.direction == AGENT_TO_CLIENT and f.kind == "request" and f.method == method
    ]


def client_answers(frames: list[Frame], request_id: Any) -> list[dict[str, Any]]:
    return [
        f.message
        for f in frames
        if f.sender == "client" and f.kind == "response" and f.message["id"] == request_id
    ]


def index(frames: list[Frame], predicate: Any) -> int:
    return next((i for i, f in enumerate(frames) if predicate(f)), -1)


def states(frames: list[Frame]) -> list[str]:
    return [u["state"] for u in session_updates(frames) if u["sessionUpdate"] == "state_update"]


def is_state(state: str, stop: str | None = None) -> Any:
    def match(f: Frame) -> bool:
        u = ((f.message or {}).get("params") or {}).get("update") or {}
        return (
            f.method == "session/update"
            and u.get("sessionUpdate") == "state_update"
            and u.get("state") == state
            and (stop is None or u.get("stopReason") == stop)
        )

    return match


def is_sent(method: str) -> Any:
    return lambda f: f.sender == "client" and f.method == method


# ---------------------------------------------------------------- client API


def ts_agent(ts_sdk: Path, log: Path) -> list[str]:
    return tap_argv(log, ts_agent_argv(ts_sdk))


@pytest.mark.anyio
async def test_client_echo(ts_sdk: Path, tmp_path: Path) -> None:
    log = tmp_path / "wire.jsonl"
    with anyio.fail_after(TIMEOUT):
        async with connect(ts_agent(ts_sdk, log), cwd=tmp_path) as client:
            assert client.agent_info.name == "acp2-interop-ts-agent"
            assert client.protocol_version == 2
            session = await client.new_session()
            work = await session.prompt("echo hello world")
            assert await work.wait() == "end_turn"
            assert work.text == "hello world"
            assert session.state.foreground == "idle"

    frames = valid_wire(log)
    prompt = next(f.message for f in frames if f.method == "session/prompt")
    assert prompt["params"]["prompt"] == [{"type": "text", "text": "echo hello world"}]
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
    ts_sdk: Path, tmp_path: Path, policy: Any, kind: str, status: str, text: str
) -> None:
    log = tmp_path / "wire.jsonl"
    with anyio.fail_after(TIMEOUT):
        async with connect(ts_agent(ts_sdk, log), cwd=tmp_path, permissions=policy) as client:
            session = await client.new_session()
            work = await session.prompt("tools")
            assert await work.wait() == "end_turn"
            assert work.text == text
            (call,) = session.state.tool_calls.values()
            assert call.status == status
            assert call.kind == "edit"
            assert call.name == "edit_file"  # Nov's ToolCallUpdate.name (D-22)
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
    assert states(frames) == ["running", "requires_action", "running", "idle"]


@pytest.mark.anyio
async def test_client_cancel_mid_turn(ts_sdk: Path, tmp_path: Path) -> None:
    log = tmp_path / "wire.jsonl"
    with anyio.fail_after(TIMEOUT):
        async with connect(ts_agent(ts_sdk, log), cwd=tmp_path) as client:
            session = await client.new_session()
            work = await session.prompt("wait")
            async for update in work:
                if isinstance(update, StateUpdate) and update.state == "running":
                    break
            assert await work.cancel() == "cancelled"
            assert session.state.foreground == "idle"
            assert session.state.stop_reason == "cancelled"
            again = await session.prompt("echo again")
            assert await again.wait() == "end_turn"
            assert again.text == "again"

    frames = valid_wire(log)
    cancel = index(frames, is_sent("session/cancel"))
    assert 0 < cancel < index(frames, is_state("idle", "cancelled"))
    assert frames[cancel].message["params"] == {"sessionId": session.id}
    assert [u.get("stopReason") for u in session_updates(frames) if u.get("state") == "idle"] == [
        "cancelled",
        "end_turn",
    ]


@pytest.mark.anyio
async def test_client_cancel_during_permission_wait(ts_sdk: Path, tmp_path: Path) -> None:
    log = tmp_path / "wire.jsonl"
    asked = anyio.Event()

    async def hold(request: PermissionRequest) -> None:
        asked.set()
        await anyio.sleep_forever()  # a user who never answers

    with anyio.fail_after(TIMEOUT):
        async with connect(ts_agent(ts_sdk, log), cwd=tmp_path, permissions=hold) as client:
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
    cancel = index(frames, is_sent("session/cancel"))
    answered = index(frames, lambda f: f.sender == "client" and f.message in answers)
    assert 0 < cancel < answered  # answered because of the cancel (Aug PL-16, Nov D-15)
    assert cancel < index(frames, is_state("idle", "cancelled"))


@pytest.mark.anyio
async def test_client_streams_10000_chunks(ts_sdk: Path, tmp_path: Path) -> None:
    log = tmp_path / "wire.jsonl"
    count = 10_000
    seen: list[Any] = []
    with anyio.fail_after(timeouts.RUN_TIMEOUT):
        async with connect(ts_agent(ts_sdk, log), cwd=tmp_path) as client:
            session = await client.new_session(on_update=lambda update, raw: seen.append(update))
            work = await session.prompt(f"stream {count}")
            assert await work.wait() == "end_turn"
            assert work.text == "".join(f"{i}," for i in range(count))
            (message,) = [m for m in session.state.messages.values() if m.kind == "agent"]

    chunks = [u for u in seen if isinstance(u, AgentMessageChunk)]
    assert len(chunks) == count
    assert {c.message_id for c in chunks} == {message.message_id}
    result = schema_validation.check_log(log)
    assert result.problems == []
    assert result.sampled
    assert result.frames > count


@pytest.mark.anyio
async def test_client_close_while_running(ts_sdk: Path, tmp_path: Path) -> None:
    log = tmp_path / "wire.jsonl"
    with anyio.fail_after(TIMEOUT):
        async with connect(ts_agent(ts_sdk, log), cwd=tmp_path) as client:
            session = await client.new_session()
            work = await session.prompt("wait")
            async for update in work:
                if isinstance(update, StateUpdate) and update.state == "running":
                    break
            await session.close()
            assert session.closed
            assert work.done
            assert work.stop_reason == "cancelled"
            assert session.id not in client.sessions

    frames = valid_wire(log)
    close = index(frames, is_sent("session/close"))
    idle = index(frames, is_state("idle", "cancelled"))
    response = index(
        frames,
        lambda f: (
            f.sender == "agent"
            and f.kind == "response"
            and f.message["id"] == frames[close].message["id"]
        ),
    )
    assert 0 < close < idle < response  # D-16: the idle comes before the close response


@pytest.mark.anyio
async def test_client_answers_a_withdrawn_permission_cancelled(
    ts_sdk: Path, tmp_path: Path
) -> None:
    """session/close during a permission wait: the agent withdraws its request with
    $/cancel_request, and the client answers it once, with outcome cancelled (D-15)."""
    log = tmp_path / "wire.jsonl"
    asked = anyio.Event()

    async def hold(request: PermissionRequest) -> None:
        asked.set()
        await anyio.sleep_forever()

    with anyio.fail_after(TIMEOUT):
        async with connect(ts_agent(ts_sdk, log), cwd=tmp_path, permissions=hold) as client:
            session = await client.new_session()
            work = await session.prompt("tools")
            await asked.wait()
            await session.close()
            assert work.stop_reason == "cancelled"
            other = await client.new_session()
            assert await (await other.prompt("echo still here")).wait() == "end_turn"

    frames = valid_wire(log)
    (request,) = agent_requests(frames, "session/request_permission")
    withdrawn = [f for f in frames if f.method == "$/cancel_request" and f.sender == "agent"]
    assert [f.message["params"] for f in withdrawn] == [{"requestId": request["id"]}]
    answers = client_answers(frames, request["id"])
    assert [a.get("result") for a in answers] == [{"outcome": {"outcome": "cancelled"}}]


@pytest.mark.anyio
async def test_client_resume_with_replay_and_list(ts_sdk: Path, tmp_path: Path) -> None:
    log = tmp_path / "wire.jsonl"
    with anyio.fail_after(TIMEOUT):
        async with connect(ts_agent(ts_sdk, log), cwd=tmp_path) as client:
            first = await client.new_session()
            assert await (await first.prompt("echo first")).wait() == "end_turn"
            await first.close()
            assert first.closed

            resumed = await client.resume(first.id, replay=True)
            texts = {key: m.text for key, m in resumed.state.messages.items()}
            assert sorted(texts.values()) == ["echo first", "first"], texts
            assert resumed.state.foreground == "idle"
            work = await resumed.prompt("echo second")
            assert await work.wait() == "end_turn"
            assert work.text == "second"

            listed = await client.list_sessions(cwd=tmp_path)
            assert [s.session_id for s in listed] == [first.id]
            assert await client.list_sessions(cwd=tmp_path / "elsewhere") == []

    frames = valid_wire(log)
    resume = index(frames, is_sent("session/resume"))
    assert frames[resume].message["params"] == {
        "sessionId": first.id,
        "cwd": str(tmp_path),
        "mcpServers": [],
        "replayFrom": {"type": "start"},
    }
    response = index(
        frames,
        lambda f: (
            f.sender == "agent"
            and f.kind == "response"
            and f.message["id"] == frames[resume].message["id"]
        ),
    )
    replayed = session_updates(frames[resume:response])
    kinds = [u["sessionUpdate"] for u in replayed]
    assert "user_message" in kinds
    assert "agent_message_chunk" in kinds
    assert kinds[-1] == "state_update"  # the snapshot before the response (D-14)


@pytest.mark.anyio
async def test_client_passes_unknown_update_and_meta_through(ts_sdk: Path, tmp_path: Path) -> None:
    log = tmp_path / "wire.jsonl"
    raws: list[bytes] = []
    with anyio.fail_after(TIMEOUT):
        async with connect(ts_agent(ts_sdk, log), cwd=tmp_path) as client:
            session = await client.new_session(on_update=lambda update, raw: raws.append(raw))
            work = await session.prompt("ext")
            assert await work.wait() == "end_turn"
            custom = [bytes(u) for u in work.updates if isinstance(u, msgspec.Raw)]
            unknown = [bytes(u) for u in session.state.unknown]
            messages = [m for m in session.state.messages.values() if m.kind == "agent"]
            assert await client.ext_request("_acp2/echo", {"value": 42}) == {
                "echoed": {"value": 42}
            }
            await client.ext_notify("_acp2/ping", {"sessionId": session.id})

    frames = valid_wire(log)
    wire = [f for f in frames if f.method == "session/update"]
    assert len(raws) == len(wire)
    for raw, frame in zip(raws, wire, strict=True):
        assert raw.decode() in frame.line, "an update was not handed over byte for byte"
    (sent,) = [f.line for f in wire if '"_acp2/custom"' in f.line]
    assert len(custom) == 1
    assert custom == unknown
    assert custom[0].decode() in sent
    assert json.loads(custom[0]) == {"sessionUpdate": "_acp2/custom", "payload": {"answer": 42}}
    assert [m.meta for m in messages] == [{"acp2/test": {"tag": "meta-on-update"}}]
    assert any(f.method == "_acp2/ping" and f.sender == "client" for f in frames)


# ---------------------------------------------------------------- acp2 run


def agent_script(tmp_path: Path, ts_sdk: Path, log: Path) -> Path:
    """An executable that runs the TS agent behind the tap (an argv without ``--``)."""
    script = tmp_path / "ts-agent.sh"
    script.write_text(f"#!/bin/sh\nexec {shlex.join(ts_agent(ts_sdk, log))}\n")
    script.chmod(0o755)
    return script


def acp2_run(
    tmp_path: Path, ts_sdk: Path, prompt: str, *options: str, stdin: Any = subprocess.DEVNULL
) -> tuple[subprocess.CompletedProcess[str], Path]:
    log = tmp_path / "wire.jsonl"
    argv = [sys.executable, "-m", "acp2", "run", "--cwd", str(tmp_path)]
    argv += ["--timeout", str(TIMEOUT), *options, prompt, "--"]
    argv.append(str(agent_script(tmp_path, ts_sdk, log)))
    done = subprocess.run(
        argv, stdin=stdin, capture_output=True, text=True, timeout=TIMEOUT + 15, cwd=tmp_path
    )
    return done, log


def json_output(done: subprocess.CompletedProcess[str], frames: list[Frame]) -> dict[str, Any]:
    """Check ``acp2 run --json`` printed every wire update unchanged (between them, the
    permission request and answer lines); return its summary."""
    lines = [
        line
        for line in done.stdout.splitlines()
        if not line.startswith(('{"permissionRequest":', '{"permissionResponse":'))
    ]
    wire = [f.line for f in frames if f.method == "session/update"]
    assert len(lines) == len(wire) + 1, done.stdout
    for line, sent in zip(lines, wire, strict=False):
        assert line in sent, f"printed {line!r}, but the wire had {sent!r}"
    summary: dict[str, Any] = json.loads(lines[-1])
    return summary


@pytest.fixture
def held_stdin() -> Iterator[int]:
    """A stdin that never delivers a line and never ends (a user who does not answer)."""
    read, write = os.pipe()
    yield read
    os.close(read)
    os.close(write)


def test_acp2_run_echo(ts_sdk: Path, tmp_path: Path) -> None:
    done, log = acp2_run(tmp_path, ts_sdk, "echo hello world")

    assert done.returncode == 0, done.stderr
    assert done.stdout == "hello world\n"
    valid_wire(log)


@pytest.mark.parametrize(
    ("permission", "status", "text"),
    [("allow", "completed", "edited hello.txt"), ("deny", "failed", "")],
)
def test_acp2_run_tools(
    ts_sdk: Path, tmp_path: Path, permission: str, status: str, text: str
) -> None:
    done, log = acp2_run(tmp_path, ts_sdk, "tools", "--json", "--permission", permission)

    assert done.returncode == 0, done.stderr
    frames = valid_wire(log)
    summary = json_output(done, frames)
    assert summary["stopReason"] == "end_turn"
    assert summary["text"] == text
    (asked,) = agent_requests(frames, "session/request_permission")
    (answer,) = client_answers(frames, asked["id"])
    assert answer["result"]["outcome"]["outcome"] == "selected"
    chosen = next(
        o
        for o in asked["params"]["options"]
        if o["optionId"] == answer["result"]["outcome"]["optionId"]
    )
    assert chosen["kind"] == ("allow_once" if permission == "allow" else "reject_once")
    tool = [u for u in session_updates(frames) if u["sessionUpdate"] == "tool_call_update"]
    assert tool[-1]["status"] == status


def test_acp2_run_cancel_mid_turn(ts_sdk: Path, tmp_path: Path) -> None:
    done, log = acp2_run(tmp_path, ts_sdk, "wait", "--json", "--cancel-after", "1")

    assert done.returncode == 1, done.stderr
    assert "cancelled" in done.stderr
    frames = valid_wire(log)
    summary = json_output(done, frames)
    assert summary["stopReason"] == "cancelled"
    assert summary["text"] == "waiting"
    assert 0 < index(frames, is_sent("session/cancel")) < index(frames, is_state("idle"))


def test_acp2_run_cancel_during_permission_wait(
    ts_sdk: Path, tmp_path: Path, held_stdin: int
) -> None:
    done, log = acp2_run(
        tmp_path,
        ts_sdk,
        "tools",
        *("--json", "--permission", "ask", "--cancel-after", "2"),
        stdin=held_stdin,
    )

    assert done.returncode == 1, done.stderr
    assert "[permission] Allow Edit hello.txt?" in done.stderr  # asked, never answered
    frames = valid_wire(log)
    summary = json_output(done, frames)
    assert summary["stopReason"] == "cancelled"
    (asked,) = agent_requests(frames, "session/request_permission")
    answers = client_answers(frames, asked["id"])
    assert [a.get("result") for a in answers] == [{"outcome": {"outcome": "cancelled"}}]
    tool = [u for u in session_updates(frames) if u["sessionUpdate"] == "tool_call_update"]
    assert tool[-1]["status"] == "cancelled"
    assert states(frames)[-1] == "idle"


def test_acp2_run_json_prints_unknown_update_unchanged(ts_sdk: Path, tmp_path: Path) -> None:
    done, log = acp2_run(tmp_path, ts_sdk, "ext", "--json")

    assert done.returncode == 0, done.stderr
    frames = valid_wire(log)
    summary = json_output(done, frames)  # every line verbatim, the custom one included
    assert summary["stopReason"] == "end_turn"
    printed = [json.loads(line) for line in done.stdout.splitlines()[:-1]]
    assert {"sessionUpdate": "_acp2/custom", "payload": {"answer": 42}} in printed
    (with_meta,) = [u for u in printed if "_meta" in u]
    assert with_meta["_meta"] == {"acp2/test": {"tag": "meta-on-update"}}


def test_acp2_run_accepts_an_agent_command_containing_double_dash(
    ts_sdk: Path, tmp_path: Path
) -> None:
    log = tmp_path / "wire.jsonl"
    argv = [sys.executable, "-m", "acp2", "run", "--cwd", str(tmp_path), "echo hi", "--"]
    argv += ts_agent(ts_sdk, log)  # python tap.py --log FILE -- node agent.mjs ...

    done = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT, cwd=tmp_path)

    assert done.returncode == 0, done.stderr
    assert done.stdout == "hi\n"
    valid_wire(log)

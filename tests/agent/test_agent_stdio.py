"""The agent runtime over a real stdio subprocess: ``acp2 test-agent`` (TR-06, SS-12).

Restarting the agent on the same SQLite file keeps every session resumable with replay;
SIGKILL right after the client saw an update loses nothing the client saw; end of stdin
ends the process cleanly, even mid-turn.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from agent_harness import CWD, TIMEOUT, Harness, harness_over, text_of

from acp2.transport.stdio import AgentProcess, spawn_agent

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def spawned_test_agent(
    store: Path | None = None,
) -> AsyncIterator[tuple[Harness, AgentProcess]]:
    """Spawn ``acp2 test-agent`` and yield an initialized harness on it, validated on exit."""
    argv = [sys.executable, "-m", "acp2", "test-agent"]
    if store is not None:
        argv += ["--store", str(store)]
    async with spawn_agent(argv, grace=TIMEOUT) as process, harness_over(process) as h:
        await h.initialize()
        yield h, process
    problems = h.problems()
    assert not problems, "\n".join(problems[:20])


async def test_tr06_the_agent_exits_cleanly_on_end_of_stdin_in_the_middle_of_a_turn() -> None:
    async with spawned_test_agent() as (h, process):
        sid = await h.new_session()
        await h.prompt(sid, "wait")
        await h.wait_for(lambda: any(u.get("state") == "running" for u in h.updates(sid)))
    # spawn_agent closed stdin and waited up to TIMEOUT before any signal
    assert process.returncode == 0, process.stderr_tail()


async def test_tr06_the_agent_exits_cleanly_when_the_client_leaves_during_a_permission_wait() -> (
    None
):
    async def never(request: Any) -> Any:
        await anyio.sleep_forever()

    async with spawned_test_agent() as (h, process):
        h.permission = never
        sid = await h.new_session()
        await h.prompt(sid, "permission")
        await h.wait_for(lambda: h.permission_requests)
    assert process.returncode == 0, process.stderr_tail()
    assert "Traceback" not in process.stderr_tail()


async def test_ss12_resume_with_replay_after_restarting_the_agent_process(tmp_path: Path) -> None:
    store = tmp_path / "history.sqlite3"
    async with spawned_test_agent(store) as (h, _):
        sid = await h.new_session()
        first = await h.prompt(sid, "echo hello there")
        await h.wait_idle(sid)
        await h.turn(sid, "think deeply")
        live = h.updates(sid)
    async with spawned_test_agent(store) as (h, process):
        listed = await h.call("session/list", {})
        await h.call(
            "session/resume", {"sessionId": sid, "cwd": CWD, "replayFrom": {"type": "start"}}
        )
        at = h.response_index(h.request_id("session/resume"))
        replay = [f.update for f in h.frames[:at] if f.update is not None]
        idle = await h.turn(sid, "echo after restart")
        assert process.pid > 0
    assert [s["sessionId"] for s in listed["sessions"]] == [sid]
    messages = [u for u in replay if "messageId" in u]
    assert [(u["sessionUpdate"], text_of(u)) for u in messages] == [
        ("user_message", "echo hello there"),
        ("agent_message", "hello there"),
        ("user_message", "think deeply"),
        ("agent_thought", "deeply "),
        ("agent_message", "Done thinking."),
    ]
    assert messages[0]["messageId"] == first["messageId"]
    live_ids = {u["messageId"] for u in live if "messageId" in u}
    assert {u["messageId"] for u in messages} == live_ids
    # the state snapshot, then the command list, both before the response (RESUME-202)
    assert replay[-2] == {"sessionUpdate": "state_update", "state": "idle"}
    assert replay[-1]["sessionUpdate"] == "available_commands_update"
    assert idle["stopReason"] == "end_turn"


async def test_a_sigkill_right_after_an_update_was_received_loses_nothing_the_client_saw(
    tmp_path: Path,
) -> None:
    store = tmp_path / "history.sqlite3"
    async with spawned_test_agent(store) as (h, process):
        sid = await h.new_session()
        await h.prompt(sid, "echo one two three")
        await h.wait_idle(sid)
        await h.prompt(sid, "wait")
        await h.wait_for(lambda: any(text_of(u).startswith("Waiting") for u in h.updates(sid)))
        os.kill(process.pid, signal.SIGKILL)
        with anyio.fail_after(TIMEOUT):
            await h.connection.wait_closed()
        seen = [u for u in h.updates(sid) if "messageId" in u]
    assert process.returncode == -signal.SIGKILL
    async with spawned_test_agent(store) as (h, _):
        await h.call(
            "session/resume", {"sessionId": sid, "cwd": CWD, "replayFrom": {"type": "start"}}
        )
        replay = [u for u in h.updates(sid) if "messageId" in u]
    folded: dict[str, str] = {}
    for update in seen:
        folded[update["messageId"]] = folded.get(update["messageId"], "") + text_of(update)
    assert {u["messageId"]: text_of(u) for u in replay} == folded
    assert text_of(replay[-1]) == "Waiting until cancelled..."


def test_test_agent_help_lists_every_scenario() -> None:
    import subprocess

    from acp2.testing.scenarios import SCENARIOS

    result = subprocess.run(
        [sys.executable, "-m", "acp2", "test-agent", "--help"],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=True,
    )
    for name in SCENARIOS:
        assert f"\n  {name} " in result.stdout, name
    assert "--store" in result.stdout

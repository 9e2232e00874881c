"""Every ``acp2 test-agent`` scenario end to end, valid under both drafts (in process and
over stdio)."""

from __future__ import annotations

import base64
import sys
from typing import Any

import pytest
from agent_harness import TIMEOUT, Harness, agent_harness, harness_over, select, text_of

from acp2.testing.scenarios import SCENARIOS, build_test_agent
from acp2.transport.stdio import spawn_agent

pytestmark = pytest.mark.anyio


def _kinds(h: Harness, sid: str) -> list[str]:
    return [u["sessionUpdate"] for u in h.updates(sid)]


def _agent_text(h: Harness, sid: str) -> str:
    return "".join(
        text_of(u)
        for u in h.updates(sid)
        if u["sessionUpdate"] in ("agent_message_chunk", "agent_message")
    )


async def _run(prompt: str, policy: Any = None) -> tuple[Harness, str, dict[str, Any]]:
    async with agent_harness(build_test_agent(), initialize=True) as h:
        if policy is not None:
            h.permission = policy
        sid = await h.new_session()
        idle = await h.turn(sid, prompt)
    return h, sid, idle


async def test_echo_sends_the_words_back_as_chunks_of_one_message() -> None:
    h, sid, idle = await _run("echo hello big world")
    chunks = [u for u in h.updates(sid) if u["sessionUpdate"] == "agent_message_chunk"]
    assert [text_of(c) for c in chunks] == ["hello", " big", " world"]
    assert len({c["messageId"] for c in chunks}) == 1
    assert idle["stopReason"] == "end_turn"


async def test_anything_unknown_and_slash_commands_are_echoed() -> None:
    h, sid, _ = await _run("what is this")
    assert _agent_text(h, sid) == "what is this"
    h, sid, _ = await _run("/echo via command")
    assert _agent_text(h, sid) == "via command"


async def test_stream_sends_n_chunks() -> None:
    h, sid, idle = await _run("stream 300")
    assert _kinds(h, sid).count("agent_message_chunk") == 300
    assert idle["stopReason"] == "end_turn"


async def test_think_sends_thought_chunks_then_a_reply() -> None:
    h, sid, _ = await _run("think a b")
    thoughts = [text_of(u) for u in h.updates(sid) if u["sessionUpdate"] == "agent_thought_chunk"]
    assert thoughts == ["a ", "b "]
    assert _agent_text(h, sid) == "Done thinking."


async def test_plan_moves_every_entry_to_completed() -> None:
    h, sid, _ = await _run("plan")
    plans = [u["plan"] for u in h.updates(sid) if u["sessionUpdate"] == "plan_update"]
    assert len(plans) == 4
    assert [e["status"] for e in plans[-1]["entries"]] == ["completed"] * 3
    assert len({p["planId"] for p in plans}) == 1


async def test_tools_allowed_sends_a_diff_a_terminal_and_usage() -> None:
    h, sid, idle = await _run("tools", select("allow_once"))
    updates = h.updates(sid)
    calls = [u for u in updates if u["sessionUpdate"] == "tool_call_update"]
    assert [c.get("status") for c in calls] == ["pending", "in_progress", "completed"]
    chunks = [
        u["content"]["type"] for u in updates if u["sessionUpdate"] == "tool_call_content_chunk"
    ]
    assert chunks == ["diff", "terminal"]
    output = [u for u in updates if u["sessionUpdate"] == "terminal_output_chunk"]
    assert base64.b64decode(output[0]["data"]) == b"hello, world\n"
    usage = next(u for u in updates if u["sessionUpdate"] == "usage_update")
    assert usage["cost"] == {"amount": 0.01, "currency": "USD"}
    assert idle["stopReason"] == "end_turn"


async def test_tools_rejected_fails_the_call_and_changes_nothing() -> None:
    h, sid, _ = await _run("tools", select("reject_once"))
    calls = [u for u in h.updates(sid) if u["sessionUpdate"] == "tool_call_update"]
    assert [c.get("status") for c in calls] == ["pending", "failed"]
    assert "terminal_update" not in _kinds(h, sid)
    assert "Permission denied" in _agent_text(h, sid)


async def test_permission_reports_the_choice() -> None:
    h, sid, _ = await _run("permission Shall we?", select("reject_always"))
    (request,) = h.permission_requests
    assert request.title == "Shall we?"
    assert _agent_text(h, sid) == "You chose: reject_always"


async def test_wait_runs_until_cancelled() -> None:
    async with agent_harness(build_test_agent(), initialize=True) as h:
        sid = await h.new_session()
        await h.prompt(sid, "wait")
        await h.wait_for(lambda: _agent_text(h, sid))
        await h.cancel(sid)
        idle = await h.wait_idle(sid)
    assert idle["stopReason"] == "cancelled"


async def test_fail_ends_with_an_explaining_message_and_idle_error() -> None:
    h, sid, idle = await _run("fail on purpose")
    assert idle["stopReason"] == "error"
    assert "on purpose" in idle["error"]["message"]
    assert "The agent failed" in _agent_text(h, sid)


@pytest.mark.parametrize("reason", ["max_tokens", "refusal", "_custom", "end_turn"])
async def test_stop_ends_with_the_given_stop_reason(reason: str) -> None:
    _, _, idle = await _run(f"stop {reason}")
    assert idle["stopReason"] == reason


async def test_ext_sends_an_unknown_update_and_meta_verbatim() -> None:
    h, sid, _ = await _run("ext")
    custom = next(u for u in h.updates(sid) if u["sessionUpdate"] == "_acp2/custom")
    assert custom == {"sessionUpdate": "_acp2/custom", "payload": {"n": 1, "text": "custom"}}
    info = next(u for u in h.updates(sid) if u["sessionUpdate"] == "session_info_update")
    assert info["_meta"] == {"acp2.test": {"keep": True}}


async def test_all_sends_every_update_kind() -> None:
    h, sid, idle = await _run("all")
    assert {
        "user_message",
        "agent_thought_chunk",
        "agent_message_chunk",
        "agent_message",
        "plan_update",
        "tool_call_update",
        "tool_call_content_chunk",
        "terminal_update",
        "terminal_output_chunk",
        "usage_update",
        "available_commands_update",
        "session_info_update",
        "_acp2/custom",
        "state_update",
    } <= set(_kinds(h, sid))
    assert idle["stopReason"] == "end_turn"


async def test_the_ping_extension_answers_pong() -> None:
    async with agent_harness(build_test_agent(), initialize=True) as h:
        assert await h.call("_acp2/ping", {}) == {"pong": True}


async def test_every_scenario_runs_over_stdio_and_validates_under_both_drafts() -> None:
    argv = [sys.executable, "-m", "acp2", "test-agent"]
    async with spawn_agent(argv, grace=TIMEOUT) as process, harness_over(process) as h:
        await h.initialize()
        sid = await h.new_session()
        for name in SCENARIOS:
            if name == "wait":
                before = len(h.idles(sid))
                await h.prompt(sid, "wait")
                await h.wait_for(lambda: "Waiting" in text_of(h.updates(sid)[-1]))
                await h.cancel(sid)
                await h.wait_idle(sid, before + 1)
            else:
                await h.turn(sid, "stop _x" if name == "stop" else name)
        reasons = [i["stopReason"] for i in h.idles(sid)]
    assert process.returncode == 0, process.stderr_tail()
    assert len(reasons) == len(SCENARIOS)
    expected = {"wait": "cancelled", "fail": "error", "stop": "_x"}
    assert reasons == [expected.get(name, "end_turn") for name in SCENARIOS]
    problems = h.problems()
    assert not problems, "\n".join(problems[:20])

"""session/prompt on the agent runtime: acceptance, ordering, stop reasons, failures,
held prompts and agent-initiated work (PL-02..PL-07, PL-22..PL-24, MU-01, MU-02)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from agent_harness import Frame, agent_harness, make_agent, text_of
from msgspec import Raw

from acp2.agent import AgentSession, Turn
from acp2.errors import InvalidParams
from acp2.schema import Content, PlanEntry, SessionInfoUpdate, TextContent

pytestmark = pytest.mark.anyio


def _kinds(updates: list[dict[str, Any]]) -> list[str]:
    return [
        u["sessionUpdate"] + (f":{u['state']}" if u["sessionUpdate"] == "state_update" else "")
        for u in updates
    ]


def _echo_agent(**config: Any) -> Any:
    agent = make_agent(**config)

    @agent.prompt
    async def handle(turn: Turn) -> str:
        await turn.think("hmm")
        await turn.say(turn.text)
        await turn.say("!")
        return "end_turn"

    return agent


async def test_pl03_prompt_is_answered_with_message_id_before_the_turn_output() -> None:
    async with agent_harness(_echo_agent(), initialize=True) as h:
        sid = await h.new_session()
        response = await h.prompt(sid, "hello")
        await h.wait_idle(sid)
        at = h.response_index(h.request_id("session/prompt"))
        after = [f.update for f in h.frames[at + 1 :] if f.update is not None]
        before = [f.update for f in h.frames[:at] if f.update is not None]
    assert before == []
    assert _kinds(after) == [
        "user_message",
        "state_update:running",
        "agent_thought_chunk",
        "agent_message_chunk",
        "agent_message_chunk",
        "state_update:idle",
    ]
    user = after[0]
    assert response == {"messageId": user["messageId"]}
    assert user["content"] == [{"type": "text", "text": "hello"}]
    assert after[-1]["stopReason"] == "end_turn"


async def test_mu01_mu02_message_ids_are_present_stable_per_message_and_unique_across_kinds() -> (
    None
):
    async with agent_harness(_echo_agent(), initialize=True) as h:
        sid = await h.new_session()
        await h.turn(sid, "one")
        await h.turn(sid, "two")
    ids: dict[str, set[str]] = {}
    for update in h.updates(sid):
        kind = update["sessionUpdate"].removesuffix("_chunk")
        if kind in ("user_message", "agent_message", "agent_thought"):
            assert isinstance(update["messageId"], str)
            ids.setdefault(kind, set()).add(update["messageId"])
    assert {k: len(v) for k, v in ids.items()} == {
        "user_message": 2,
        "agent_message": 2,
        "agent_thought": 2,
    }
    every = [i for v in ids.values() for i in v]
    assert len(every) == len(set(every)) == 6


async def test_pl07_every_piece_of_work_ends_with_exactly_one_idle_with_a_stop_reason() -> None:
    async with agent_harness(_echo_agent(), initialize=True) as h:
        sid = await h.new_session()
        for text in ("a", "b", "c"):
            await h.turn(sid, text)
        await h.call("session/list", {})
        states = [u["state"] for u in h.updates(sid) if u["sessionUpdate"] == "state_update"]
    assert states == ["running", "idle"] * 3
    assert all(i["stopReason"] == "end_turn" for i in h.idles(sid))


@pytest.mark.parametrize("reason", ["max_tokens", "max_turn_requests", "refusal", "_custom"])
async def test_pl10_the_handlers_return_value_is_the_stop_reason(reason: str) -> None:
    agent = make_agent()

    @agent.prompt
    async def handle(turn: Turn) -> str:
        return reason

    async with agent_harness(agent, initialize=True) as h:
        idle = await h.turn(await h.new_session(), "x")
    assert idle["stopReason"] == reason


async def test_pl10_a_handler_returning_none_ends_the_turn_end_turn() -> None:
    agent = make_agent()

    @agent.prompt
    async def handle(turn: Turn) -> None:
        await turn.say("ok")

    async with agent_harness(agent, initialize=True) as h:
        idle = await h.turn(await h.new_session(), "x")
    assert idle["stopReason"] == "end_turn"


async def test_pl23_a_handler_returning_a_non_string_ends_with_error_not_a_broken_frame() -> None:
    agent = make_agent()

    @agent.prompt
    async def handle(turn: Turn) -> Any:
        return 42

    async with agent_harness(agent, initialize=True) as h:
        idle = await h.turn(await h.new_session(), "x")
    assert idle["stopReason"] == "error"
    assert "42" in idle["error"]["message"]


async def test_pl24_an_agent_without_a_prompt_handler_ends_each_prompt_end_turn() -> None:
    async with agent_harness(make_agent(), initialize=True) as h:
        idle = await h.turn(await h.new_session(), "x")
    assert idle["stopReason"] == "end_turn"


# -- rejected prompts (not inserted) ----------------------------------------------------


@pytest.mark.parametrize(
    "prompt",
    [
        [],
        [{"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}],
        [{"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"}],
        [
            {"type": "text", "text": "see"},
            {"type": "resource", "resource": {"uri": "file:///a", "text": "x"}},
        ],
        [{"type": "_custom_block", "x": 1}],
    ],
    ids=["empty", "image", "audio", "resource", "unknown"],
)
async def test_pl02_empty_or_unadvertised_content_is_invalid_params_and_nothing_is_inserted(
    prompt: list[Any],
) -> None:
    agent = _echo_agent(prompt_embedded_context=False)
    async with agent_harness(agent, initialize=True, validate="agent") as h:
        sid = await h.new_session()
        with pytest.raises(InvalidParams) as info:
            await h.prompt(sid, prompt)
        assert info.value.code == -32602
        await h.call("session/list", {})
        assert h.updates(sid) == []
        await h.turn(sid, "still works")  # the session is not stuck


async def test_pl02_advertised_image_content_is_accepted() -> None:
    agent = _echo_agent(prompt_image=True)
    image = {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}
    async with agent_harness(agent, initialize=True) as h:
        sid = await h.new_session()
        await h.turn(sid, [{"type": "text", "text": "look"}, image])
        user = h.updates(sid)[0]
    assert user["content"][1] == image


# -- held prompts -----------------------------------------------------------------------


def _gated_agent(gates: list[anyio.Event]) -> Any:
    agent = make_agent()

    @agent.prompt
    async def handle(turn: Turn) -> str:
        await turn.say(f"start {turn.text}")
        if gates:
            await gates.pop(0).wait()
        await turn.say(f"end {turn.text}")
        return "end_turn"

    return agent


async def test_pl22_a_prompt_during_a_running_turn_is_held_until_the_first_turns_idle() -> None:
    gate = anyio.Event()
    async with agent_harness(_gated_agent([gate]), initialize=True) as h:
        sid = await h.new_session()
        await h.prompt(sid, "one")
        await h.wait_for(lambda: len(h.updates(sid)) >= 3)
        responses: list[Any] = []

        async def second() -> None:
            responses.append(await h.prompt(sid, "two"))

        async with anyio.create_task_group() as tg:
            tg.start_soon(second)
            await h.wait_for(lambda: len(h.requests("session/prompt")) == 2)
            await h.call("session/list", {})  # the agent has received the second prompt
            assert responses == []
            assert h.response_index(h.request_id("session/prompt", 1)) == -1
            gate.set()
        await h.wait_idle(sid, 2)
    first_idle = h.index(lambda f: f.update is not None and f.update.get("state") == "idle")
    second_response = h.response_index(h.request_id("session/prompt", 1))
    assert first_idle < second_response
    tail = [f.update for f in h.frames[second_response + 1 :] if f.update is not None]
    assert _kinds(tail) == [
        "user_message",
        "state_update:running",
        "agent_message_chunk",
        "agent_message_chunk",
        "state_update:idle",
    ]
    assert responses == [{"messageId": tail[0]["messageId"]}]


async def test_pl22_three_back_to_back_prompts_run_in_order_and_never_interleave() -> None:
    gates = [anyio.Event()]
    async with agent_harness(_gated_agent(gates), initialize=True) as h:
        sid = await h.new_session()
        gate = gates[0]
        async with anyio.create_task_group() as tg:
            for text in ("a", "b", "c"):
                tg.start_soon(h.prompt, sid, text)
                await h.wait_for(
                    lambda n=text: any(  # type: ignore[misc]
                        f.sender == "client"
                        and f.method == "session/prompt"
                        and f.message["params"]["prompt"][0]["text"] == n
                        for f in h.frames
                    )
                )
            await h.call("session/list", {})
            gate.set()
        await h.wait_idle(sid, 3)
    runs: list[str] = []
    for update in h.updates(sid):
        if update["sessionUpdate"] == "user_message":
            runs.append("user:" + text_of(update))
        elif update["sessionUpdate"] == "state_update":
            runs.append(update["state"])
        else:
            runs.append(text_of(update))
    assert runs == [
        "user:a", "running", "start a", "end a", "idle",
        "user:b", "running", "start b", "end b", "idle",
        "user:c", "running", "start c", "end c", "idle",
    ]  # fmt: skip


# -- failures (PL-23) -------------------------------------------------------------------


def _failing_agent() -> Any:
    agent = make_agent()

    @agent.prompt
    async def handle(turn: Turn) -> str:
        if turn.text == "fail":
            call = await turn.tool_call("Doomed", kind="execute")
            await call.start()
            await turn.say("about to fail")
            raise RuntimeError("the model exploded\nsecond line")
        await turn.say("fine")
        return "end_turn"

    return agent


async def test_pl23_a_handler_exception_becomes_a_readable_message_then_idle_error() -> None:
    async with agent_harness(_failing_agent(), initialize=True) as h:
        sid = await h.new_session()
        response = await h.prompt(sid, "fail")
        idle = await h.wait_idle(sid)
        updates = h.updates(sid)
    assert "messageId" in response
    assert idle["stopReason"] == "error"
    assert idle["error"]["code"] == -32603
    assert "RuntimeError: the model exploded" in idle["error"]["message"]
    assert "second line" not in idle["error"]["message"]
    whole = [u for u in updates if u["sessionUpdate"] == "agent_message"]
    assert len(whole) == 1
    assert "the model exploded" in text_of(whole[0])
    chunk = next(u for u in updates if u["sessionUpdate"] == "agent_message_chunk")
    assert whole[0]["messageId"] != chunk["messageId"]  # the streamed text is kept
    calls = [u for u in updates if u["sessionUpdate"] == "tool_call_update"]
    assert calls[-1]["status"] == "failed"  # no tool call left running after the idle
    assert updates.index(calls[-1]) < updates.index(idle)
    assert not any(f.sender == "agent" and "error" in f.message for f in h.frames)


async def test_pl23_the_session_still_works_after_a_handler_exception() -> None:
    async with agent_harness(_failing_agent(), initialize=True) as h:
        sid = await h.new_session()
        await h.turn(sid, "fail")
        idle = await h.turn(sid, "again")
    assert idle["stopReason"] == "end_turn"


# -- the Turn API on the wire -------------------------------------------------------------


async def test_turn_api_sends_each_update_kind_with_patch_semantics() -> None:
    agent = make_agent()

    @agent.prompt
    async def handle(turn: Turn) -> str:
        first = await turn.say("a")
        turn.new_message()
        second = await turn.say("b")
        assert first != second
        await turn.message([TextContent(text="replaced")], message_id=first)
        await turn.message(None, message_id=second)
        await turn.plan([PlanEntry(content="x", priority="high", status="pending")], plan_id="p1")
        call = await turn.tool_call("Read", kind="read", raw_input={"path": "/a"})
        await call.update(title=None)
        await call.complete(raw_output={"ok": True})
        term = await turn.terminal("ls", cwd="/tmp")
        await term.write(b"")
        await term.write(b"\x1b[1mx")
        await term.exit(signal="SIGTERM")
        await turn.usage(10, 100)
        return "end_turn"

    async with agent_harness(agent, initialize=True) as h:
        sid = await h.new_session()
        await h.turn(sid, "go")
    updates = h.updates(sid)[2:-1]
    assert _kinds(updates) == [
        "agent_message_chunk",
        "agent_message_chunk",
        "agent_message",
        "agent_message",
        "plan_update",
        "tool_call_update",
        "tool_call_update",
        "tool_call_update",
        "terminal_update",
        "terminal_output_chunk",
        "terminal_update",
        "usage_update",
    ]
    assert updates[3]["content"] is None
    assert updates[4]["plan"]["planId"] == "p1"
    assert updates[5] == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": updates[5]["toolCallId"],
        "title": "Read",
        "kind": "read",
        "status": "pending",
        "rawInput": {"path": "/a"},
    }
    assert updates[6] == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": updates[5]["toolCallId"],
        "title": None,
    }
    assert updates[8]["cwd"] == "/tmp"
    assert updates[9]["data"] == "G1sxbXg="
    assert updates[10]["exitStatus"] == {"signal": "SIGTERM"}
    assert "cost" not in updates[11]


async def test_pl24_agent_initiated_work_runs_running_to_idle_without_a_user_message() -> None:
    agent = make_agent()
    sessions: list[AgentSession] = []

    async def on_start(session: AgentSession) -> None:
        sessions.append(session)

    agent.on_session_start = on_start

    async def background(turn: Turn) -> str:
        assert turn.message_id is None
        await turn.say("I noticed something")
        return "end_turn"

    async with agent_harness(agent, initialize=True) as h:
        sid = await h.new_session()
        await sessions[0].start_work(background)
        await h.wait_idle(sid)
        await sessions[0].send(SessionInfoUpdate(title="background title"))
        await h.wait_for(lambda: len(h.updates(sid)) == 4)
    assert _kinds(h.updates(sid)) == [
        "state_update:running",
        "agent_message_chunk",
        "state_update:idle",
        "session_info_update",
    ]


async def test_frames_are_recorded_in_wire_order() -> None:
    # The harness itself: client frames and agent frames interleave as sent/received.
    async with agent_harness(make_agent(), initialize=True) as h:
        await h.new_session()
    senders = [f.sender for f in h.frames]
    assert senders == ["client", "agent", "client", "agent"]
    assert isinstance(h.frames[0], Frame)


async def test_a_handler_streaming_in_a_tight_loop_does_not_starve_other_sessions() -> None:
    agent = make_agent()
    said = [0]
    seen_at: list[int] = []

    @agent.prompt
    async def handle(turn: Turn) -> str:
        if turn.text == "busy":
            for _ in range(20_000):  # never awaits anything but the runtime's own calls
                await turn.say(".")
                said[0] += 1
        else:
            seen_at.append(said[0])
        return "end_turn"

    async with agent_harness(agent, initialize=True, validate=False) as h:
        busy = await h.new_session()
        other = await h.new_session()
        await h.prompt(busy, "busy")
        await h.wait_for(lambda: len(h.updates(busy)) > 3)
        await h.turn(other, "quick")
        await h.wait_idle(busy)
    # the other session's prompt ran before the busy handler finished
    assert said == [20_000]
    assert seen_at[0] < 20_000


async def test_tc01_a_tool_call_can_carry_its_content_in_the_first_update() -> None:
    agent = make_agent()

    @agent.prompt
    async def handle(turn: Turn) -> str:
        preview = [Content(content=TextContent(text="preview"))]
        await turn.tool_call("Edit a file", kind="edit", content=preview)
        return "end_turn"

    async with agent_harness(agent, initialize=True) as h:
        sid = await h.new_session()
        await h.prompt(sid, "go")
        await h.wait_idle(sid)
        calls = [u for u in h.updates(sid) if u["sessionUpdate"] == "tool_call_update"]
    assert len(calls) == 1
    assert calls[0]["status"] == "pending"
    assert calls[0]["content"] == [
        {"type": "content", "content": {"type": "text", "text": "preview"}}
    ]


async def test_tr02_a_pretty_printed_raw_update_is_compacted_into_one_line() -> None:
    agent = make_agent()

    @agent.prompt
    async def handle(turn: Turn) -> str:
        await turn.send(Raw(b'{\n  "sessionUpdate": "_acp2/pretty",\n  "n": 1\n}'))
        return "end_turn"

    async with agent_harness(agent, initialize=True) as h:
        sid = await h.new_session()
        await h.prompt(sid, "go")
        await h.wait_idle(sid)
        custom = [u for u in h.updates(sid) if u["sessionUpdate"] == "_acp2/pretty"]
    assert custom == [{"sessionUpdate": "_acp2/pretty", "n": 1}]

"""session/resume and replay on the agent runtime (SS-10..SS-17, SS-26, TM-09, D-14)."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest
from agent_harness import CWD, agent_harness, make_agent, text_of

from acp2.agent import HistoryStore, Turn
from acp2.agent.replay import fold, fold_rows, render
from acp2.agent.split import FRAME_BUDGET
from acp2.errors import InvalidParams, RequestError, ResourceNotFound
from acp2.schema import (
    AgentMessageChunk,
    CompactionSummaryChunk,
    CompactionUpdate,
    Content,
    PlanEntry,
    SessionInfoUpdate,
    TerminalExitStatus,
    TerminalOutput,
    TerminalUpdate,
    TextContent,
)
from acp2.schema.codec import encode
from acp2.state import SessionState, reduce
from acp2.testing.scenarios import build_test_agent

pytestmark = pytest.mark.anyio


def _rich_agent(store: Any) -> Any:
    agent = make_agent(store=store)

    @agent.prompt
    async def handle(turn: Turn) -> str:
        await turn.think("thinking ")
        await turn.think("hard")
        for word in turn.text.split():
            await turn.say(word + " ")
        await turn.plan([PlanEntry(content="one", priority="high", status="pending")])
        await turn.plan([PlanEntry(content="one", priority="high", status="completed")])
        call = await turn.tool_call("Run ls", kind="execute", raw_input={"cmd": "ls"})
        await call.start()
        term = await turn.terminal("ls")
        await call.show_terminal(term)
        await term.write(b"a\n")
        await term.write(b"b\n")
        await term.exit(0)
        await call.complete()
        return "end_turn"

    return agent


async def _record(store: Any, prompts: list[str]) -> tuple[str, list[dict[str, Any]]]:
    async with agent_harness(_rich_agent(store), initialize=True) as h:
        sid = await h.new_session()
        for text in prompts:
            await h.turn(sid, text)
    return sid, h.updates(sid)


async def _resume(agent: Any, sid: str, **params: Any) -> tuple[Any, Any]:
    async with agent_harness(agent, initialize=True) as h:
        result = await h.call("session/resume", {"sessionId": sid, "cwd": CWD, **params})
        await h.call("session/list", {})
    return result, h


def _before_response(h: Any) -> list[dict[str, Any]]:
    at = h.response_index(h.request_id("session/resume"))
    return [f.update for f in h.frames[:at] if f.update is not None]


async def test_ss10_ss26_resuming_an_unknown_session_is_32002_with_the_session_id() -> None:
    async with agent_harness(make_agent(), initialize=True) as h:
        with pytest.raises(ResourceNotFound) as info:
            await h.call("session/resume", {"sessionId": "sess_nope", "cwd": CWD})
    assert info.value.code == -32002
    assert info.value.data == {"sessionId": "sess_nope"}


async def test_ss10_resuming_with_a_different_cwd_is_invalid_params() -> None:
    store = HistoryStore(":memory:")
    sid, _ = await _record(store, ["hi"])
    async with agent_harness(make_agent(store=store), initialize=True) as h:
        with pytest.raises(InvalidParams):
            await h.call("session/resume", {"sessionId": sid, "cwd": "/somewhere/else"})
        with pytest.raises(InvalidParams):
            await h.call("session/resume", {"sessionId": sid, "cwd": "relative"})
        # the same directory spelled differently is the same cwd
        await h.call("session/resume", {"sessionId": sid, "cwd": CWD + "/"})


async def test_ss11_ss16_without_replay_from_only_a_state_snapshot_precedes_the_response() -> None:
    store = HistoryStore(":memory:")
    sid, _ = await _record(store, ["hello world"])
    result, h = await _resume(make_agent(store=store), sid)
    assert result == {}
    assert _before_response(h) == [{"sessionUpdate": "state_update", "state": "idle"}]


async def test_ss12_replay_from_start_sends_the_whole_conversation_then_state_then_response() -> (
    None
):
    store = HistoryStore(":memory:")
    sid, live = await _record(store, ["hello world", "second turn"])
    _, h = await _resume(make_agent(store=store), sid, replayFrom={"type": "start"})
    replay = _before_response(h)
    kinds = [u["sessionUpdate"] for u in replay]
    assert kinds == [
        "user_message",
        "agent_thought",
        "agent_message",
        "plan_update",
        "tool_call_update",
        "user_message",
        "agent_thought",
        "agent_message",
        "tool_call_update",
        "terminal_update",
        "terminal_update",
        "replay_complete",
        "state_update",
    ]
    assert replay[-1] == {"sessionUpdate": "state_update", "state": "idle"}
    # SS-13 / SS-17: the original ids, one whole message per message
    live_ids = {
        (u["sessionUpdate"].removesuffix("_chunk"), u["messageId"])
        for u in live
        if "messageId" in u
    }
    replay_ids = {(u["sessionUpdate"], u["messageId"]) for u in replay if "messageId" in u}
    assert replay_ids == live_ids
    assert text_of(replay[0]) == "hello world"
    assert text_of(replay[1]) == "thinking hard"
    assert text_of(replay[2]) == "hello world "
    assert replay[3]["plan"]["entries"][0]["status"] == "completed"
    call = replay[4]
    assert call["status"] == "completed"
    assert call["title"] == "Run ls"
    assert call["rawInput"] == {"cmd": "ls"}
    assert call["content"][0]["type"] == "terminal"
    terminal = replay[9]
    assert base64.b64decode(terminal["output"]["data"]) == b"a\nb\n"
    assert terminal["exitStatus"] == {"exitCode": 0}
    assert terminal["command"] == "ls"


async def test_ss12_the_user_message_keeps_the_id_its_prompt_response_carried() -> None:
    store = HistoryStore(":memory:")
    async with agent_harness(_rich_agent(store), initialize=True) as h:
        sid = await h.new_session()
        response = await h.prompt(sid, "remember me")
        await h.wait_idle(sid)
    _, h2 = await _resume(make_agent(store=store), sid, replayFrom={"type": "start"})
    assert _before_response(h2)[0]["messageId"] == response["messageId"]


async def test_ss13_replaying_many_stored_chunks_folds_them_into_one_whole_message() -> None:
    store = HistoryStore(":memory:")
    agent = make_agent(store=store)

    @agent.prompt
    async def handle(turn: Turn) -> str:
        for i in range(500):
            await turn.say(f"{i},")
        return "end_turn"

    async with agent_harness(agent, initialize=True) as h:
        sid = await h.new_session()
        await h.turn(sid, "count")
    assert sum(1 for _ in store.updates(sid)) == 501  # the user message + every chunk
    _, h2 = await _resume(make_agent(store=store), sid, replayFrom={"type": "start"})
    replay = _before_response(h2)
    kinds = [u["sessionUpdate"] for u in replay]
    assert kinds == ["user_message", "agent_message", "replay_complete", "state_update"]
    assert text_of(replay[1]) == "".join(f"{i}," for i in range(500))


@pytest.mark.parametrize(
    "replay_from", [{"type": "message", "messageId": "m1"}, {"type": "_custom"}, "start", 5]
)
async def test_ss15_an_unknown_or_malformed_replay_from_is_invalid_params(replay_from: Any) -> None:
    store = HistoryStore(":memory:")
    sid, _ = await _record(store, ["hi"])
    async with agent_harness(make_agent(store=store), initialize=True, validate="agent") as h:
        with pytest.raises(InvalidParams) as info:
            await h.call(
                "session/resume", {"sessionId": sid, "cwd": CWD, "replayFrom": replay_from}
            )
        assert info.value.code == -32602
        assert h.updates(sid) == []


async def test_ss11_replay_from_null_means_no_replay() -> None:
    store = HistoryStore(":memory:")
    sid, _ = await _record(store, ["hi"])
    _, h = await _resume(make_agent(store=store), sid, replayFrom=None)
    assert [u["sessionUpdate"] for u in _before_response(h)] == ["state_update"]


async def test_ss10_a_resumed_session_takes_prompts_and_appends_to_the_same_history() -> None:
    store = HistoryStore(":memory:")
    sid, _ = await _record(store, ["first"])
    async with agent_harness(_rich_agent(store), initialize=True) as h:
        await h.call("session/resume", {"sessionId": sid, "cwd": CWD})
        await h.turn(sid, "second")
    _, h2 = await _resume(make_agent(store=store), sid, replayFrom={"type": "start"})
    users = [text_of(u) for u in _before_response(h2) if u["sessionUpdate"] == "user_message"]
    assert users == ["first", "second"]


async def test_ss12_replay_survives_restarting_the_agent_on_the_same_sqlite_file(
    tmp_path: Path,
) -> None:
    path = tmp_path / "history.sqlite3"
    sid, _ = await _record(str(path), ["before restart"])
    # a brand-new Agent (and HistoryStore) on the same file, as after a process restart
    _, h = await _resume(make_agent(store=str(path)), sid, replayFrom={"type": "start"})
    replay = _before_response(h)
    assert text_of(replay[0]) == "before restart"
    listed = [s["sessionId"] for s in (await _list(make_agent(store=str(path))))["sessions"]]
    assert listed == [sid]


async def _list(agent: Any) -> Any:
    async with agent_harness(agent, initialize=True) as h:
        return await h.call("session/list", {})


async def test_ss12_replay_of_the_test_agents_all_scenario_is_valid_under_both_drafts() -> None:
    store = HistoryStore(":memory:")
    agent = build_test_agent()
    agent.store = store
    async with agent_harness(agent, initialize=True) as h:
        sid = await h.new_session()
        await h.turn(sid, "all")
        await h.turn(sid, "fail")
    again = build_test_agent()
    again.store = store
    result, h2 = await _resume(again, sid, replayFrom={"type": "start"})
    kinds = {u["sessionUpdate"] for u in _before_response(h2)}
    assert {
        "user_message",
        "agent_message",
        "agent_thought",
        "plan_update",
        "tool_call_update",
        "terminal_update",
        "usage_update",
        "available_commands_update",
        "session_info_update",
        "_acp2/custom",
    } <= kinds
    assert [c["name"] for c in result["availableCommands"]] == ["echo"]


async def test_ss14_resuming_a_session_that_is_live_on_this_connection_replays_and_keeps_it() -> (
    None
):
    store = HistoryStore(":memory:")
    async with agent_harness(_rich_agent(store), initialize=True) as h:
        sid = await h.new_session()
        await h.turn(sid, "once")
        before = len(h.updates(sid))
        await h.call(
            "session/resume", {"sessionId": sid, "cwd": CWD, "replayFrom": {"type": "start"}}
        )
        replayed = h.updates(sid)[before:]
        idle = await h.turn(sid, "twice")
    assert replayed[0]["sessionUpdate"] == "user_message"
    assert replayed[-1] == {"sessionUpdate": "state_update", "state": "idle"}
    assert idle["stopReason"] == "end_turn"


async def test_replay_skips_a_stored_update_that_no_longer_decodes() -> None:
    store = HistoryStore(":memory:")
    sid, _ = await _record(store, ["fine"])
    store.append(sid, b'{"sessionUpdate":"agent_message_chunk","messageId":5}')
    store.append(sid, b'{"sessionUpdate":"agent_message","messageId":"late","content":[]}')
    _, h = await _resume(make_agent(store=store), sid, replayFrom={"type": "start"})
    replay = _before_response(h)
    assert "late" in [u.get("messageId") for u in replay]


async def test_ss13_compactions_usage_and_titles_are_replayed_as_whole_updates() -> None:
    store = HistoryStore(":memory:")
    agent = make_agent(store=store)

    @agent.prompt
    async def handle(turn: Turn) -> str:
        await turn.send(CompactionUpdate(compaction_id="c1", status="in_progress"))
        await turn.send(CompactionSummaryChunk(compaction_id="c1", content=TextContent(text="a")))
        await turn.send(CompactionSummaryChunk(compaction_id="c1", content=TextContent(text="b")))
        await turn.send(CompactionUpdate(compaction_id="c1", status="completed"))
        await turn.usage(10, 100, cost=(0.5, "USD"))
        await turn.usage(20, 100, cost=(0.75, "USD"))
        await turn.send(SessionInfoUpdate(title="Compacted"))
        return "end_turn"

    async with agent_harness(agent, initialize=True) as h:
        sid = await h.new_session()
        await h.turn(sid, "go")
    _, h2 = await _resume(make_agent(store=store), sid, replayFrom={"type": "start"})
    replay = {u["sessionUpdate"]: u for u in _before_response(h2)}
    assert replay["compaction_update"] == {
        "sessionUpdate": "compaction_update",
        "compactionId": "c1",
        "status": "completed",
        "summary": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
    }
    assert "compaction_summary_chunk" not in replay
    assert replay["usage_update"] == {
        "sessionUpdate": "usage_update",
        "used": 20,
        "size": 100,
        "cost": {"amount": 0.75, "currency": "USD"},
    }
    assert replay["session_info_update"]["title"] == "Compacted"


# -- long sessions (issue 10, section 8) ----------------------------------------------------


def _refold(updates: list[Any]) -> SessionState:
    state = SessionState()
    for update in updates:
        reduce(state, update)
    return state


def _big_state() -> SessionState:
    """A message, a thought, a tool call, a compaction and a terminal, each over 1 MiB."""
    state = SessionState()
    text = [TextContent(text=f'line {i} "quoted"\n') for i in range(120_000)]
    for kind in ("agent", "thought"):
        message = state.message(kind, f"{kind}_1")
        message.content.extend(text)
        message.meta = {"k": 1}
    call = state.tool_call("call_1")
    call.content.extend(Content(content=b) for b in text[:60_000])
    comp = state.compaction("comp_1")
    comp.summary.extend(text)
    term = state.terminal("term_1")
    term.append(bytes(range(256)) * 12_000)
    term.exit_status = TerminalExitStatus(exit_code=0)
    return state


def test_render_splits_every_entity_over_the_budget_and_the_receiver_rebuilds_it() -> None:
    state = _big_state()
    updates = list(render(state))
    sizes = [len(encode(u)) for u in updates]
    assert max(sizes) <= FRAME_BUDGET + 4096
    assert len(updates) > 5 * 4  # each of the five entities was split
    again = _refold(updates)
    for key, message in state.messages.items():
        assert again.messages[key].text == message.text
        assert again.messages[key].meta == {"k": 1}
    assert len(encode(again.tool_calls["call_1"].content)) == len(
        encode(state.tool_calls["call_1"].content)
    )
    rebuilt = "".join(b.text for b in again.compactions["comp_1"].summary)
    assert rebuilt == "".join(b.text for b in state.compactions["comp_1"].summary)
    assert bytes(again.terminals["term_1"].output) == bytes(state.terminals["term_1"].output)
    assert again.terminals["term_1"].exit_status == TerminalExitStatus(exit_code=0)


def test_render_keeps_an_entity_that_fits_exactly_as_it_was() -> None:
    state = SessionState()
    message = state.message("agent", "a")
    message.content.extend([TextContent(text="one"), TextContent(text="two")])
    (update,) = render(state)
    assert update.content == [TextContent(text="one"), TextContent(text="two")]


async def test_folding_stored_rows_in_slices_gives_the_same_state_as_folding_at_once(
    tmp_path: Path,
) -> None:
    store = HistoryStore(tmp_path / "h.sqlite3")
    store.create_session("s", "/p", [])
    for row in range(300):
        for i in range(7):
            chunk = AgentMessageChunk(message_id="m", content=TextContent(text=f"{row}.{i} "))
            store.append("s", encode(chunk))
        store.flush()
    sliced = await fold_rows(store.row_batches("s", rows=16), threaded=True)
    assert (
        sliced.messages[("agent", "m")].text
        == fold(store.updates("s")).messages[("agent", "m")].text
    )
    store.close()


async def test_a_session_another_store_holds_is_refused_and_free_again_after_close(
    tmp_path: Path,
) -> None:
    path = tmp_path / "h.sqlite3"
    async with agent_harness(make_agent(store=str(path)), initialize=True) as h1:
        sid = await h1.new_session()
        async with agent_harness(make_agent(store=str(path)), initialize=True) as h2:
            params = {"sessionId": sid, "cwd": CWD}
            with pytest.raises(RequestError) as refused:
                await h2.call("session/resume", params)
            assert refused.value.code == -32010
            await h1.call("session/close", {"sessionId": sid})
            await h2.call("session/resume", params)


async def test_a_split_replay_is_valid_under_both_drafts() -> None:
    store = HistoryStore(":memory:")
    store.create_session("s", CWD, [])
    for i in range(60_000):  # 1.5 MB of text: over the 1 MiB budget as one whole message
        chunk = AgentMessageChunk(message_id="m", content=TextContent(text=f"{i:<25}"))
        store.append("s", encode(chunk))
    output = base64.b64encode(b"\x1b[1mbold\x1b[0m\n" * 70_000).decode()
    store.append("s", encode(TerminalUpdate(terminal_id="t", output=TerminalOutput(data=output))))
    store.append("s", encode(TerminalUpdate(terminal_id="t", exit_status=TerminalExitStatus())))
    store.flush()
    _, h = await _resume(make_agent(store=store), "s", replayFrom={"type": "start"})
    replay = _before_response(h)
    kinds = [u["sessionUpdate"] for u in replay]
    assert kinds[0] == "agent_message"
    assert "agent_message_chunk" in kinds
    assert "terminal_output_chunk" in kinds
    # the exit status comes last, then the replay boundary and the state snapshot
    assert kinds[-3:] == ["terminal_update", "replay_complete", "state_update"]


def test_a_stored_message_between_sessions_is_replayed_whole_with_its_ids() -> None:
    stored = [
        b'{"sessionUpdate":"session_message","messageId":"sm1","senderSessionId":"sess_child",'
        b'"recipientSessionId":"sess_1"}',
        b'{"sessionUpdate":"session_message_chunk","messageId":"sm1",'
        b'"content":{"type":"text","text":"Found "}}',
        b'{"sessionUpdate":"session_message_chunk","messageId":"sm1",'
        b'"content":{"type":"text","text":"it."}}',
    ]
    (update,) = list(render(fold(stored)))
    assert encode(update) == (
        b'{"sessionUpdate":"session_message","messageId":"sm1","senderSessionId":"sess_child",'
        b'"recipientSessionId":"sess_1","content":[{"type":"text","text":"Found it."}]}'
    )

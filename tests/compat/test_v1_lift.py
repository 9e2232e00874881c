"""v1 -> v2 lifting: lifted updates reduce into the real SessionState."""

from __future__ import annotations

import itertools
from collections import Counter
from typing import Any

import msgspec
from v1_check import assert_v1, assert_v2

import acp2.compat.v1.schema as v1
import acp2.schema as v2
from acp2.compat.v1.lift import MAIN_PLAN_ID, MODE_CONFIG_ID, V1Lifter
from acp2.schema.codec import decode, encode
from acp2.state import SessionState, reduce

_TEXT = v1.TextContent(text="hi")


def _lifter() -> V1Lifter:
    counter = itertools.count(1)
    return V1Lifter("s1", new_id=lambda: f"id{next(counter)}")


def _v1(update: dict[str, Any]) -> Any:
    return decode(encode({"sessionId": "s1", "update": update}), v1.SessionNotification)


def _run(lifter: V1Lifter, *updates: Any, state: SessionState | None = None) -> SessionState:
    state = state if state is not None else SessionState()
    for update in updates:
        for lifted in lifter.lift(update if not isinstance(update, dict) else _v1(update)):
            assert_v2(
                v2.UpdateSessionNotification(session_id="s1", update=lifted),
                "UpdateSessionNotification",
            )
            reduce(state, lifted)
    return state


def _chunk(kind: str, text: str, message_id: str | None = None) -> dict[str, Any]:
    update: dict[str, Any] = {"sessionUpdate": kind, "content": {"type": "text", "text": text}}
    if message_id is not None:
        update["messageId"] = message_id
    return update


def test_chunks_without_ids_form_one_message_per_run_of_one_kind() -> None:
    state = _run(
        _lifter(),
        _chunk("agent_thought_chunk", "think"),
        _chunk("agent_message_chunk", "Hel"),
        _chunk("agent_message_chunk", "lo"),
        _chunk("agent_thought_chunk", "more"),
    )
    assert [(m.kind, m.text) for m in state.timeline] == [  # type: ignore[union-attr]
        ("thought", "think"),
        ("agent", "Hello"),
        ("thought", "more"),
    ]


def test_a_tool_call_between_chunks_starts_a_new_message() -> None:
    state = _run(
        _lifter(),
        _chunk("agent_message_chunk", "a"),
        {"sessionUpdate": "tool_call", "toolCallId": "t", "title": "T"},
        _chunk("agent_message_chunk", "b"),
    )
    assert [type(e).__name__ for e in state.timeline] == [
        "MessageState",
        "ToolCallState",
        "MessageState",
    ]


def test_v1_message_ids_are_kept() -> None:
    state = _run(
        _lifter(),
        _chunk("agent_message_chunk", "a", "m1"),
        _chunk("agent_message_chunk", "b", "m1"),
    )
    assert state.messages[("agent", "m1")].text == "ab"


def test_tool_call_then_tool_call_update_create_and_patch_one_call() -> None:
    state = _run(
        _lifter(),
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "t",
            "title": "Read",
            "kind": "read",
            "status": "pending",
            "locations": [{"path": "/w/a.py", "line": 3}],
            "rawInput": {"path": "/w/a.py"},
        },
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "t",
            "status": "completed",
            "title": None,
            "content": [{"type": "content", "content": {"type": "text", "text": "ok"}}],
        },
    )
    call = state.tool_calls["t"]
    assert (call.title, call.kind, call.status) == ("Read", "read", "completed")
    assert call.raw_input == {"path": "/w/a.py"}
    assert len(call.locations) == 1
    assert call.content[0].content.text == "ok"


def test_v1_null_in_a_tool_call_update_leaves_the_field_unchanged() -> None:
    state = _run(
        _lifter(),
        {"sessionUpdate": "tool_call", "toolCallId": "t", "title": "T", "kind": "edit"},
        {"sessionUpdate": "tool_call_update", "toolCallId": "t", "kind": None, "content": None},
    )
    assert state.tool_calls["t"].kind == "edit"


def test_a_repeated_tool_call_restates_the_call_and_clears_what_it_omits() -> None:
    state = _run(
        _lifter(),
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "t",
            "title": "T",
            "kind": "edit",
            "status": "in_progress",
        },
        {"sessionUpdate": "tool_call", "toolCallId": "t", "title": "T2"},
    )
    call = state.tool_calls["t"]
    assert (call.title, call.kind, call.status) == ("T2", "other", "pending")


def test_an_update_for_an_unannounced_tool_call_creates_it() -> None:
    state = _run(
        _lifter(), {"sessionUpdate": "tool_call_update", "toolCallId": "x", "status": "in_progress"}
    )
    assert state.tool_calls["x"].status == "in_progress"


def test_a_v1_diff_lifts_to_changes_and_a_git_patch() -> None:
    state = _run(
        _lifter(),
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "t",
            "title": "Edit",
            "content": [
                {"type": "diff", "path": "/w/a.py", "oldText": "x = 1\n", "newText": "x = 2\n"},
                {"type": "diff", "path": "/w/new.py", "newText": "y\n"},
            ],
        },
    )
    modify, add = state.tool_calls["t"].content
    assert isinstance(modify.changes[0], v2.DiffModifyChange)
    assert isinstance(add.changes[0], v2.DiffAddChange)
    assert modify.patch.text.splitlines()[:3] == [
        "diff --git /w/a.py /w/a.py",
        "--- /w/a.py",
        "+++ /w/a.py",
    ]
    assert "-x = 1\n+x = 2\n" in modify.patch.text
    assert add.patch.text.splitlines()[:4] == [
        "diff --git /w/new.py /w/new.py",
        "new file mode 100644",
        "--- /dev/null",
        "+++ /w/new.py",
    ]


def test_an_empty_old_text_marked_add_lifts_as_a_new_file_and_unmarked_as_a_modification() -> None:
    # Gemini CLI writes a new file as oldText "" with _meta.kind "add"; an empty oldText
    # without that mark may be an existing empty file, so it stays a modification.
    state = _run(
        _lifter(),
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "t",
            "title": "Write",
            "content": [
                {
                    "type": "diff",
                    "path": "/w/new.txt",
                    "oldText": "",
                    "newText": "new\n",
                    "_meta": {"kind": "add"},
                },
                {"type": "diff", "path": "/w/empty.txt", "oldText": "", "newText": "x\n"},
            ],
        },
    )
    add, modify = state.tool_calls["t"].content
    assert isinstance(add.changes[0], v2.DiffAddChange)
    assert "--- /dev/null" in add.patch.text
    assert "new file mode 100644" in add.patch.text
    assert add.meta == {"kind": "add"}
    assert isinstance(modify.changes[0], v2.DiffModifyChange)
    assert "--- /w/empty.txt" in modify.patch.text


def test_a_v1_terminal_reference_keeps_its_id_for_the_client_owned_terminal() -> None:
    state = _run(
        _lifter(),
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "t",
            "title": "Run",
            "content": [{"type": "terminal", "terminalId": "term-1"}, {"type": "_x"}],
        },
    )
    terminal, unknown = state.tool_calls["t"].content
    assert terminal.terminal_id == "term-1"
    assert isinstance(unknown, msgspec.Raw)


def test_the_full_v1_plan_becomes_the_main_v2_plan() -> None:
    lifter = _lifter()
    entries = [{"content": "a", "priority": "high", "status": "pending"}]
    state = _run(lifter, {"sessionUpdate": "plan", "entries": entries * 3})
    state = _run(lifter, {"sessionUpdate": "plan", "entries": entries}, state=state)
    assert len(state.plans[MAIN_PLAN_ID].entries) == 1


def test_commands_gain_a_type_and_a_text_input() -> None:
    state = _run(
        _lifter(),
        {
            "sessionUpdate": "available_commands_update",
            "availableCommands": [{"name": "web", "description": "Search", "input": {"hint": "q"}}],
        },
    )
    (command,) = state.available_commands
    assert (command.type, command.input.hint) == ("command", "q")


def test_modes_become_a_mode_config_option_that_mode_updates_keep_current() -> None:
    lifter = _lifter()
    response = decode(
        encode(
            {
                "sessionId": "s1",
                "modes": {
                    "currentModeId": "ask",
                    "availableModes": [
                        {"id": "ask", "name": "Ask"},
                        {"id": "code", "name": "Code"},
                    ],
                },
                "configOptions": [
                    {"type": "boolean", "id": "web", "name": "Web", "currentValue": True}
                ],
            }
        ),
        v1.NewSessionResponse,
    )
    seeded = lifter.session_result(response)
    assert [o.config_id for o in seeded] == ["web", MODE_CONFIG_ID]
    state = _run(lifter, {"sessionUpdate": "current_mode_update", "currentModeId": "code"})
    assert state.config_options[1].current_value == "code"
    state = _run(
        lifter,
        {
            "sessionUpdate": "config_option_update",
            "configOptions": [
                {"type": "boolean", "id": "web", "name": "Web", "currentValue": False}
            ],
        },
        state=state,
    )
    assert [(o.config_id, o.current_value) for o in state.config_options] == [
        ("web", False),
        ("mode", "code"),
    ]


def test_setting_the_mode_option_is_a_v1_set_mode_and_others_stay_config_options() -> None:
    lifter = _lifter()
    lifter.session_result(
        v1.NewSessionResponse(
            session_id="s1",
            modes=v1.SessionModeState(
                current_mode_id="ask", available_modes=[v1.SessionMode(id="ask", name="Ask")]
            ),
        )
    )
    mode = lifter.set_config_option(
        v2.SetSessionConfigOptionRequest(session_id="s1", config_id="mode", type="id", value="ask")
    )
    assert assert_v1(mode, "SetSessionModeRequest") == {"sessionId": "s1", "modeId": "ask"}
    web = lifter.set_config_option(
        v2.SetSessionConfigOptionRequest(
            session_id="s1", config_id="web", type="boolean", value=True
        )
    )
    assert assert_v1(web, "SetSessionConfigOptionRequest") == {
        "sessionId": "s1",
        "configId": "web",
        "value": True,
        "type": "boolean",
    }


def _claude_shaped_session() -> v1.NewSessionResponse:
    # claude-agent-acp 0.23.1 sends session modes and its own `mode` config option.
    select = {"type": "select", "name": "Mode", "category": "mode", "currentValue": "default"}
    choices = [{"value": "default", "name": "Default"}, {"value": "plan", "name": "Plan"}]
    model = {"type": "select", "id": "model", "name": "Model", "currentValue": "m"}
    return decode(
        encode(
            {
                "sessionId": "s1",
                "modes": {
                    "currentModeId": "default",
                    "availableModes": [
                        {"id": "default", "name": "Default"},
                        {"id": "plan", "name": "Plan"},
                    ],
                },
                "configOptions": [
                    {**select, "id": "mode", "options": choices},
                    {**model, "options": [{"value": "m", "name": "M"}]},
                ],
            }
        ),
        v1.NewSessionResponse,
    )


def test_an_agents_own_mode_option_is_not_listed_twice_and_setting_it_is_the_agents() -> None:
    lifter = _lifter()
    created = assert_v2(lifter.new_session_result(_claude_shaped_session()), "NewSessionResponse")
    assert [o["configId"] for o in created["configOptions"]] == ["mode", "model"]
    request = v2.SetSessionConfigOptionRequest(
        session_id="s1", config_id="mode", type="id", value="plan"
    )
    sent = assert_v1(lifter.set_config_option(request), "SetSessionConfigOptionRequest")
    assert (sent["configId"], sent["value"]) == ("mode", "plan")
    # A mode update (the agent left plan mode on its own) moves the agent's option.
    state = _run(lifter, {"sessionUpdate": "current_mode_update", "currentModeId": "plan"})
    assert [(o.config_id, o.current_value) for o in state.config_options] == [
        ("mode", "plan"),
        ("model", "m"),
    ]
    assert lifter.dropped == Counter()


def test_an_option_id_the_agent_repeats_keeps_its_first_option_and_is_counted() -> None:
    lifter = _lifter()
    flag = {"type": "boolean", "id": "web", "name": "Web"}
    state = _run(
        lifter,
        {
            "sessionUpdate": "config_option_update",
            "configOptions": [{**flag, "currentValue": True}, {**flag, "currentValue": False}],
        },
    )
    assert [(o.config_id, o.current_value) for o in state.config_options] == [("web", True)]
    assert lifter.dropped["config_option.duplicate"] == 1


def test_a_mode_update_before_any_modes_is_counted_not_lifted() -> None:
    lifter = _lifter()
    _run(lifter, {"sessionUpdate": "current_mode_update", "currentModeId": "code"})
    assert lifter.dropped["current_mode_update.no_modes"] == 1


def test_usage_and_session_info_pass_through() -> None:
    state = _run(
        _lifter(),
        {
            "sessionUpdate": "usage_update",
            "used": 5,
            "size": 10,
            "cost": {"amount": 1.0, "currency": "USD"},
        },
        {"sessionUpdate": "session_info_update", "title": "T"},
    )
    assert state.usage is not None
    assert (state.usage.used, state.usage.cost.amount, state.title) == (5, 1.0, "T")


def test_unknown_v1_update_kinds_are_kept_raw_and_counted() -> None:
    lifter = _lifter()
    state = _run(lifter, {"sessionUpdate": "_progress", "pct": 5})
    assert len(state.unknown) == 1
    assert lifter.unknown["_progress"] == 1


def test_a_prompt_synthesizes_the_user_message_running_and_then_idle() -> None:
    lifter = _lifter()
    state = SessionState()
    request = v2.PromptRequest(session_id="s1", prompt=[v2.TextContent(text="fix it")])
    params, message_id, updates = lifter.prompt(request)
    assert assert_v1(params, "PromptRequest") == {
        "sessionId": "s1",
        "prompt": [{"type": "text", "text": "fix it"}],
    }
    for update in updates:
        reduce(state, update)
    assert state.messages[("user", message_id)].text == "fix it"
    assert state.busy
    _run(lifter, _chunk("agent_message_chunk", "done"), state=state)
    for update in lifter.prompt_done(v1.PromptResponse(stop_reason="end_turn")):
        reduce(state, update)
    assert (state.busy, state.stop_reason, state.completed) == (False, "end_turn", 1)


def test_a_cancelled_prompt_ends_idle_cancelled_and_a_failed_one_idle_error() -> None:
    lifter = _lifter()
    state = SessionState()
    _, _, updates = lifter.prompt(
        v2.PromptRequest(session_id="s1", prompt=[v2.TextContent(text="x")])
    )
    for update in [*updates, *lifter.prompt_done(v1.PromptResponse(stop_reason="cancelled"))]:
        reduce(state, update)
    assert state.stop_reason == "cancelled"
    _, _, updates = lifter.prompt(
        v2.PromptRequest(session_id="s1", prompt=[v2.TextContent(text="y")])
    )
    error = v2.Error(code=-32603, message="boom")
    for update in [*updates, *lifter.prompt_failed(error)]:
        reduce(state, update)
    assert (state.stop_reason, state.error) == ("error", error)


def test_each_turn_starts_new_messages() -> None:
    lifter = _lifter()
    state = _run(lifter, _chunk("agent_message_chunk", "one"))
    lifter.prompt_done(v1.PromptResponse(stop_reason="end_turn"))
    state = _run(lifter, _chunk("agent_message_chunk", "two"), state=state)
    assert [m.text for m in state.timeline] == ["one", "two"]  # type: ignore[union-attr]


def test_user_chunks_during_a_turn_are_echoes_and_outside_one_are_history() -> None:
    lifter = _lifter()
    state = _run(lifter, _chunk("user_message_chunk", "old prompt"))
    _, _, updates = lifter.prompt(
        v2.PromptRequest(session_id="s1", prompt=[v2.TextContent(text="new")])
    )
    for update in updates:
        reduce(state, update)
    _run(lifter, _chunk("user_message_chunk", "new"), state=state)
    assert [m.text for m in state.timeline] == ["old prompt", "new"]  # type: ignore[union-attr]
    assert lifter.dropped["user_message_chunk.echo"] == 1


def test_session_results_lift_to_v2_with_modes_as_a_config_option() -> None:
    lifter = _lifter()
    modes = v1.SessionModeState(
        current_mode_id="ask", available_modes=[v1.SessionMode(id="ask", name="Ask")]
    )
    created = lifter.new_session_result(v1.NewSessionResponse(session_id="s1", modes=modes))
    out = assert_v2(created, "NewSessionResponse")
    assert out["sessionId"] == "s1"
    assert [o["configId"] for o in out["configOptions"]] == [MODE_CONFIG_ID]
    loaded = assert_v2(lifter.resume_result(v1.LoadSessionResponse()), "ResumeSessionResponse")
    assert loaded["configOptions"][0]["currentValue"] == "ask"
    bare = V1Lifter("s2").resume_result(v1.ResumeSessionResponse())
    assert assert_v2(bare, "ResumeSessionResponse") == {}

"""v2 -> v1 projection of session updates: every rule, every frame valid v1."""

from __future__ import annotations

import base64
from typing import Any

import msgspec
from v1_check import assert_v1_updates

import acp2.schema as v2
from acp2.compat.v1.project import V1Projector

_TEXT = v2.TextContent(text="hi")


def _feed(projector: V1Projector, *updates: Any) -> list[dict[str, Any]]:
    out = []
    for update in updates:
        out += assert_v1_updates(projector.project(update))
    return out


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def test_message_and_thought_chunks_keep_their_message_id() -> None:
    p = V1Projector("s1")
    out = _feed(
        p,
        v2.AgentMessageChunk(message_id="m1", content=_TEXT),
        v2.AgentThoughtChunk(message_id="t1", content=_TEXT),
        v2.UserMessageChunk(message_id="u1", content=_TEXT),
    )
    assert [(u["sessionUpdate"], u["messageId"]) for u in out] == [
        ("agent_message_chunk", "m1"),
        ("agent_thought_chunk", "t1"),
        ("user_message_chunk", "u1"),
    ]
    assert out[0]["content"] == {"type": "text", "text": "hi"}


def test_a_notification_is_unwrapped_and_readdressed_to_the_session() -> None:
    p = V1Projector("s1")
    note = v2.UpdateSessionNotification(
        session_id="s1", update=v2.AgentMessageChunk(message_id="m", content=_TEXT)
    )
    (frame,) = p.project(note)
    assert frame.session_id == "s1"


def test_an_unknown_content_block_is_dropped_and_counted() -> None:
    p = V1Projector("s1")
    raw = msgspec.Raw(b'{"type":"_video","url":"x"}')
    assert _feed(p, v2.AgentMessageChunk(message_id="m", content=raw)) == []
    assert p.dropped["content.unknown"] == 1


def test_resource_link_icons_are_dropped_and_counted() -> None:
    p = V1Projector("s1")
    link = v2.ResourceLink(name="a", uri="file:///a", icons=[v2.Icon(src="https://x/i.png")])
    (out,) = _feed(p, v2.AgentMessageChunk(message_id="m", content=link))
    assert "icons" not in out["content"]
    assert p.dropped["content.icons"] == 1


def test_the_prompt_acknowledgement_is_not_sent_back_to_the_client() -> None:
    p = V1Projector("s1")
    p.prompt_sent()
    assert _feed(p, v2.UserMessage(message_id="u1", content=[_TEXT])) == []
    assert p.dropped["user_message.ack"] == 1


def test_the_acknowledgement_can_be_named_by_its_message_id() -> None:
    p = V1Projector("s1")
    p.prompt_sent("mine")
    other = _feed(p, v2.UserMessage(message_id="theirs", content=[_TEXT]))
    assert [u["sessionUpdate"] for u in other] == ["user_message_chunk"]
    assert _feed(p, v2.UserMessage(message_id="mine", content=[_TEXT])) == []


def test_a_whole_message_never_seen_is_fanned_out_as_chunks() -> None:
    p = V1Projector("s1")
    out = _feed(p, v2.AgentMessage(message_id="m", content=[_TEXT, v2.TextContent(text="2")]))
    assert [(u["sessionUpdate"], u["content"]["text"]) for u in out] == [
        ("agent_message_chunk", "hi"),
        ("agent_message_chunk", "2"),
    ]


def test_replacing_or_patching_a_message_v1_already_shows_is_dropped_and_counted() -> None:
    p = V1Projector("s1")
    _feed(p, v2.AgentMessageChunk(message_id="m", content=_TEXT))
    assert _feed(p, v2.AgentMessage(message_id="m", content=[])) == []
    assert _feed(p, v2.AgentThought(message_id="t", meta={"k": 1})) == []
    assert p.dropped["agent_message.replace"] == 1
    assert p.dropped["agent_thought.replace"] == 1


def test_state_updates_notices_compactions_subagents_and_unknown_kinds_are_not_sent() -> None:
    p = V1Projector("s1")
    updates = [
        v2.StateUpdate(state="running"),
        v2.StateUpdate(state="idle", stop_reason="end_turn"),
        v2.Notice(severity="info", title="t"),
        v2.CompactionUpdate(compaction_id="c", status="completed"),
        v2.CompactionSummaryChunk(compaction_id="c", content=_TEXT),
        v2.SubagentUpdate(session_id="child", title="Research"),
        msgspec.Raw(b'{"sessionUpdate":"_x"}'),
    ]
    assert _feed(p, *updates) == []
    assert dict(p.dropped) == {
        "state_update": 2,
        "notice": 1,
        "compaction_update": 1,
        "compaction_summary_chunk": 1,
        "subagent_update": 1,
        "update.unknown": 1,
    }


def test_plans_are_sent_as_the_full_entry_list_without_cancelled_entries() -> None:
    p = V1Projector("s1")
    entries = [
        v2.PlanEntry(content="a", priority="high", status="completed"),
        v2.PlanEntry(content="b", priority="low", status="cancelled"),
        v2.PlanEntry(content="c", priority="_urgent", status="_blocked"),
    ]
    (out,) = _feed(p, v2.PlanUpdate(plan=v2.PlanItems(plan_id="p", entries=entries)))
    assert out["sessionUpdate"] == "plan"
    assert out["entries"] == [
        {"content": "a", "priority": "high", "status": "completed"},
        {"content": "c", "priority": "medium", "status": "pending"},
    ]
    assert p.dropped["plan.entry.cancelled"] == 1
    assert p.dropped["plan.entry.priority"] == p.dropped["plan.entry.status"] == 1


def test_several_plans_are_merged_and_an_unknown_plan_type_removes_its_plan() -> None:
    p = V1Projector("s1")

    def plan(plan_id: str, content: str) -> v2.PlanUpdate:
        entry = v2.PlanEntry(content=content, priority="high", status="pending")
        return v2.PlanUpdate(plan=v2.PlanItems(plan_id=plan_id, entries=[entry]))

    _feed(p, plan("a", "1"))
    (merged,) = _feed(p, plan("b", "2"))
    assert [e["content"] for e in merged["entries"]] == ["1", "2"]
    assert p.dropped["plan.merged"] == 1
    (after,) = _feed(p, v2.PlanUpdate(plan=msgspec.Raw(b'{"type":"_md","planId":"a"}')))
    assert [e["content"] for e in after["entries"]] == ["2"]
    assert p.dropped["plan.unknown"] == 1
    assert _feed(p, v2.PlanUpdate(plan=msgspec.Raw(b'{"type":"_md","planId":"zz"}'))) == []


def test_commands_lose_their_type_and_non_text_inputs() -> None:
    p = V1Projector("s1")
    commands = [
        v2.AvailableCommand(name="web", description="Search", input=v2.TextCommandInput(hint="q")),
        v2.AvailableCommand(
            name="pick", description="Pick", input=msgspec.Raw(b'{"type":"_choice"}')
        ),
        v2.AvailableCommand(type="_macro", name="m", description="M"),
    ]
    (out,) = _feed(p, v2.AvailableCommandsUpdate(available_commands=commands))
    assert out["availableCommands"] == [
        {"name": "web", "description": "Search", "input": {"hint": "q"}},
        {"name": "pick", "description": "Pick"},
    ]
    assert p.dropped["command.input"] == p.dropped["command.unknown"] == 1


def _options() -> list[Any]:
    mode = v2.SessionConfigSelect(
        config_id="mode",
        name="Mode",
        category="mode",
        current_value="ask",
        options=[
            v2.SessionConfigSelectOption(value="ask", name="Ask"),
            v2.SessionConfigSelectOption(value="code", name="Code"),
        ],
    )
    grouped = v2.SessionConfigSelect(
        config_id="model",
        name="Model",
        current_value="fast",
        options=[
            v2.SessionConfigSelectOption(
                group_id="g",
                name="G",
                options=[v2.SessionConfigSelectOption(value="fast", name="Fast")],
            )
        ],
    )
    web = v2.SessionConfigBoolean(config_id="web", name="Web", current_value=True)
    return [mode, grouped, web, msgspec.Raw(b'{"type":"_slider","configId":"s","name":"S"}')]


def test_config_options_are_renamed_and_booleans_go_only_to_clients_that_support_them() -> None:
    p = V1Projector("s1")
    (out,) = _feed(p, v2.ConfigOptionUpdate(config_options=_options()))
    assert [o["id"] for o in out["configOptions"]] == ["mode", "model"]
    assert out["configOptions"][1]["options"][0]["group"] == "g"
    assert p.dropped["config_option.boolean"] == p.dropped["config_option.unknown"] == 1
    with_booleans = V1Projector("s1", boolean_options=True)
    (out,) = _feed(with_booleans, v2.ConfigOptionUpdate(config_options=_options()))
    assert [o["id"] for o in out["configOptions"]] == ["mode", "model", "web"]


def test_a_change_of_the_mode_option_is_also_sent_as_current_mode_update() -> None:
    p = V1Projector("s1", mode_config_id="mode")
    p.note_mode("ask")
    options = _options()
    assert [
        u["sessionUpdate"] for u in _feed(p, v2.ConfigOptionUpdate(config_options=options))
    ] == ["config_option_update"]
    options[0].current_value = "code"
    out = _feed(p, v2.ConfigOptionUpdate(config_options=options))
    assert out[1] == {"sessionUpdate": "current_mode_update", "currentModeId": "code"}


def test_usage_repeats_the_last_cost_until_it_is_cleared() -> None:
    p = V1Projector("s1")
    cost = v2.Cost(amount=0.5, currency="USD")
    first, kept, cleared = _feed(
        p,
        v2.UsageUpdate(used=1, size=10, cost=cost),
        v2.UsageUpdate(used=2, size=10),
        v2.UsageUpdate(used=3, size=10, cost=None),
    )
    assert first["cost"] == kept["cost"] == {"amount": 0.5, "currency": "USD"}
    assert "cost" not in cleared


def test_session_info_passes_through() -> None:
    p = V1Projector("s1")
    (out,) = _feed(p, v2.SessionInfoUpdate(title="T", updated_at=None))
    assert out == {"sessionUpdate": "session_info_update", "title": "T", "updatedAt": None}


def test_an_unacknowledged_prompt_stops_waiting_for_its_ack_when_the_turn_ends() -> None:
    p = V1Projector("s1")
    p.prompt_sent()
    _feed(p, v2.StateUpdate(state="idle", stop_reason="end_turn"))
    out = _feed(p, v2.UserMessage(message_id="later", content=[_TEXT]))
    assert [u["sessionUpdate"] for u in out] == ["user_message_chunk"]


def _note(update: Any, **fields: Any) -> v2.UpdateSessionNotification:
    return v2.UpdateSessionNotification(session_id="s1", update=update, **fields)


def test_a_plain_text_chunk_is_verbatim_its_v2_encoding_is_the_v1_projection() -> None:
    for kind in (v2.AgentMessageChunk, v2.AgentThoughtChunk, v2.UserMessageChunk):
        note = _note(kind(message_id="m", content=v2.TextContent(text='a\n"b', meta={"k": 1})))
        assert V1Projector("s1").verbatim(note)
        (projected,) = V1Projector("s1").project(note)
        as_v2 = msgspec.json.decode(msgspec.json.encode(note))
        assert as_v2 == msgspec.json.decode(msgspec.json.encode(projected))
        assert_v1_updates([projected])


def test_chunks_v1_would_say_differently_are_not_verbatim() -> None:
    p = V1Projector("s1")
    annotated = v2.TextContent(text="hi", annotations=v2.Annotations(priority=0.5))
    image = v2.ImageContent(data=_b64(b"x"), mime_type="image/png")
    assert not p.verbatim(_note(v2.AgentMessageChunk(message_id="m", content=annotated)))
    assert not p.verbatim(_note(v2.AgentMessageChunk(message_id="m", content=image)))
    assert not p.verbatim(_note(v2.AgentMessageChunk(message_id="m", content=_TEXT), meta={}))
    assert not p.verbatim(_note(v2.AgentMessage(message_id="m", content=[_TEXT])))
    assert not p.verbatim(_note(v2.StateUpdate(state="running")))


def test_a_verbatim_chunk_counts_as_spoken_so_a_later_whole_message_is_not_repeated() -> None:
    p = V1Projector("s1")
    assert p.verbatim(_note(v2.AgentMessageChunk(message_id="m", content=_TEXT)))
    assert p.verbatim(_note(v2.AgentMessageChunk(message_id="m", content=_TEXT)))
    assert _feed(p, v2.AgentMessage(message_id="m", content=[_TEXT])) == []
    assert p.dropped["agent_message.replace"] == 1

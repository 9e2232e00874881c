"""Session-level updates: plans (PN), usage (US), config (CO), commands (CM), info (SI),
notices and compactions (Nov D-21)."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from msgspec import Raw
from state_updates import OMIT, feed, text, texts

from acp2.state import MAX_NOTICES, CompactionState, PlanState

# -- plans -------------------------------------------------------------------------------


def plan(plan_id: str, *entries: str, status: str = "pending") -> dict[str, Any]:
    """A ``plan_update`` of an ``items`` plan."""
    items = [{"content": e, "priority": "medium", "status": status} for e in entries]
    return {
        "sessionUpdate": "plan_update",
        "plan": {"type": "items", "planId": plan_id, "entries": items},
    }


def entries(state: Any, plan_id: str) -> list[str]:
    """The entry texts of one plan."""
    return [e.content for e in state.plans[plan_id].entries]


def test_each_plan_update_replaces_the_entries_entirely_pn02() -> None:
    state = feed(plan("p1", "a", "b", "c"), plan("p1", "x", "y", status="completed"))
    assert entries(state, "p1") == ["x", "y"]
    assert {e.status for e in state.plans["p1"].entries} == {"completed"}


def test_an_empty_entry_list_empties_the_plan_pn02() -> None:
    assert entries(feed(plan("p1", "a"), plan("p1")), "p1") == []


def test_several_plans_are_tracked_separately_in_first_seen_order_pn03() -> None:
    state = feed(plan("p1", "a"), plan("p2", "b"), plan("p1", "c"))
    assert (entries(state, "p1"), entries(state, "p2")) == (["c"], ["b"])
    assert [e.plan_id for e in state.timeline if isinstance(e, PlanState)] == ["p1", "p2"]


def test_an_unknown_plan_type_is_kept_raw_and_replaces_the_plan_pn05() -> None:
    unknown = {"type": "_markdown", "planId": "p1", "markdown": "# do it"}
    state = feed(plan("p1", "a"), {"sessionUpdate": "plan_update", "plan": unknown})
    kept = state.plans["p1"]
    assert isinstance(kept.plan, Raw)
    assert msgspec.json.decode(kept.plan) == unknown
    assert kept.entries == []
    feed(plan("p1", "b"), state=state)
    assert entries(state, "p1") == ["b"]


def test_an_unknown_plan_without_a_plan_id_is_kept_as_an_unknown_update() -> None:
    state = feed({"sessionUpdate": "plan_update", "plan": {"type": "_x"}})
    assert state.plans == {}
    assert msgspec.json.decode(state.unknown[0])["plan"] == {"type": "_x"}


def test_unknown_entry_priorities_and_statuses_are_kept_pn04() -> None:
    update = plan("p1", "a")
    update["plan"]["entries"][0].update(priority="_urgent", status="_blocked")
    entry = feed(update).plans["p1"].entries[0]
    assert (entry.priority, entry.status) == ("_urgent", "_blocked")


# -- usage -------------------------------------------------------------------------------


def usage(used: int, size: int, cost: Any = OMIT) -> dict[str, Any]:
    """A ``usage_update``."""
    update: dict[str, Any] = {"sessionUpdate": "usage_update", "used": used, "size": size}
    if cost is not OMIT:
        update["cost"] = cost
    return update


USD = {"amount": 0.5, "currency": "USD"}

# (case id, updates, expected (used, size, cost amount or None))
USAGE_CASES: list[tuple[str, list[dict[str, Any]], tuple[int, int, Any]]] = [
    ("US-01 used and size are replaced", [usage(1, 10), usage(5, 20)], (5, 20, None)),
    ("US-02 cost is stored", [usage(1, 10, USD)], (1, 10, 0.5)),
    ("US-04 cost omitted keeps the last", [usage(1, 10, USD), usage(2, 10)], (2, 10, 0.5)),
    ("US-04 cost null clears", [usage(1, 10, USD), usage(2, 10, None)], (2, 10, None)),
    (
        "US-02 a later cost replaces",
        [usage(1, 10, USD), usage(2, 10, {"amount": 2.0, "currency": "credits"})],
        (2, 10, 2.0),
    ),
]


@pytest.mark.parametrize(
    ("updates", "expected"), [c[1:] for c in USAGE_CASES], ids=[c[0] for c in USAGE_CASES]
)
def test_usage_follows_its_patch_rules(
    updates: list[dict[str, Any]], expected: tuple[int, int, Any]
) -> None:
    got = feed(*updates).usage
    assert got is not None
    assert (got.used, got.size, got.cost.amount if got.cost else None) == expected


def test_usage_is_none_until_reported() -> None:
    assert feed().usage is None


# -- config options and commands -------------------------------------------------------


def boolean_option(config_id: str, value: bool) -> dict[str, Any]:
    """A boolean config option."""
    return {"type": "boolean", "configId": config_id, "name": config_id, "currentValue": value}


def config(*options: dict[str, Any]) -> dict[str, Any]:
    """A ``config_option_update`` with the complete list."""
    return {"sessionUpdate": "config_option_update", "configOptions": list(options)}


def test_config_options_are_replaced_whole_co08() -> None:
    state = feed(config(boolean_option("a", True), boolean_option("b", False)))
    feed(config(boolean_option("c", True)), state=state)
    assert [o.config_id for o in state.config_options] == ["c"]
    feed(config(), state=state)
    assert state.config_options == []


def test_unknown_option_types_are_kept_raw_in_order_co04() -> None:
    custom = {"type": "_slider", "configId": "s", "name": "S", "currentValue": 3}
    state = feed(config(boolean_option("a", True), custom))
    assert isinstance(state.config_options[1], Raw)
    assert msgspec.json.decode(state.config_options[1]) == custom


def commands(*items: dict[str, Any]) -> dict[str, Any]:
    """An ``available_commands_update`` with the complete list."""
    return {"sessionUpdate": "available_commands_update", "availableCommands": list(items)}


def test_commands_are_replaced_whole_cm01() -> None:
    plan_cmd = {"type": "command", "name": "plan", "description": "Plan"}
    state = feed(commands(plan_cmd, {"type": "command", "name": "web", "description": "Web"}))
    feed(commands(plan_cmd), state=state)
    assert [c.name for c in state.available_commands] == ["plan"]
    feed(commands(), state=state)
    assert state.available_commands == []


def test_a_command_without_type_is_a_command_cm03() -> None:
    state = feed(commands({"name": "test", "description": "Run tests", "input": {"hint": "x"}}))
    (cmd,) = state.available_commands
    assert (cmd.type, cmd.name) == ("command", "test")


def test_an_unknown_command_input_type_is_kept_raw_cm02() -> None:
    cmd = {"type": "command", "name": "x", "description": "d", "input": {"type": "_form"}}
    (got,) = feed(commands(cmd)).available_commands
    assert isinstance(got.input, Raw)


# -- session info ------------------------------------------------------------------------


def info(**fields: Any) -> dict[str, Any]:
    """A ``session_info_update`` (``meta`` becomes ``_meta``)."""
    if "meta" in fields:
        fields["_meta"] = fields.pop("meta")
    return {"sessionUpdate": "session_info_update", **fields}


# (case id, updates, expected (title, updated_at, meta))
INFO_CASES: list[tuple[str, list[dict[str, Any]], tuple[Any, Any, Any]]] = [
    ("SI-01 title value", [info(title="Fix bug")], ("Fix bug", None, None)),
    ("SI-01 title null clears", [info(title="t"), info(title=None)], (None, None, None)),
    (
        "SI-01 omitted keeps",
        [info(title="t"), info(updatedAt="2026-01-01T00:00:00Z")],
        ("t", "2026-01-01T00:00:00Z", None),
    ),
    (
        "SI-01 updatedAt null clears",
        [info(updatedAt="2026-01-01T00:00:00Z"), info(updatedAt=None)],
        (None, None, None),
    ),
    (
        "SI-01 meta key patch",
        [info(meta={"a": 1}), info(meta={"b": 2, "a": None})],
        (None, None, {"b": 2}),
    ),
    ("SI-01 meta null clears", [info(meta={"a": 1}), info(meta=None)], (None, None, None)),
    (
        "SI-01 an empty update changes nothing",
        [info(title="t", meta={"a": 1}), info()],
        ("t", None, {"a": 1}),
    ),
]


@pytest.mark.parametrize(
    ("updates", "expected"), [c[1:] for c in INFO_CASES], ids=[c[0] for c in INFO_CASES]
)
def test_session_info_is_patched_si01_si02(
    updates: list[dict[str, Any]], expected: tuple[Any, Any, Any]
) -> None:
    state = feed(*updates)
    assert (state.title, state.updated_at, state.meta) == expected


# -- notices and compactions (Nov) -------------------------------------------------------


def notice(title: str, severity: str = "info") -> dict[str, Any]:
    """A ``notice`` update."""
    return {"sessionUpdate": "notice", "severity": severity, "title": title}


def test_notices_are_kept_recent_first_out_and_not_in_the_timeline_d21() -> None:
    state = feed(*[notice(f"n{i}", "_custom") for i in range(MAX_NOTICES + 3)])
    assert len(state.notices) == MAX_NOTICES
    assert state.notices[0].title == "n3"
    assert state.notices[-1].severity == "_custom"
    assert state.timeline == []


def test_a_session_that_gets_no_notice_holds_no_notice_buffer() -> None:
    state = feed({"sessionUpdate": "state_update", "state": "idle"})
    assert state._notices is None  # 760 bytes per session saved (issue 16)
    assert list(state.notices) == []


def compaction(cid: str, status: str, **fields: Any) -> dict[str, Any]:
    """A ``compaction_update``."""
    return {"sessionUpdate": "compaction_update", "compactionId": cid, "status": status, **fields}


def summary_chunk(cid: str, value: str) -> dict[str, Any]:
    """A ``compaction_summary_chunk``."""
    return {
        "sessionUpdate": "compaction_summary_chunk",
        "compactionId": cid,
        "content": text(value),
    }


def test_a_summary_chunk_for_an_unseen_id_creates_an_in_progress_compaction() -> None:
    state = feed(summary_chunk("k1", "a"), summary_chunk("k1", "b"))
    comp = state.compactions["k1"]
    assert (comp.status, texts(comp.summary)) == ("in_progress", ["a", "b"])
    assert state.timeline == [comp]


# (case id, updates, expected (status, summary, error, meta))
COMPACTION_CASES: list[tuple[str, list[dict[str, Any]], tuple[Any, ...]]] = [
    (
        "summary replaces chunks",
        [summary_chunk("k", "a"), compaction("k", "completed", summary=[text("S")])],
        ("completed", ["S"], None, None),
    ),
    (
        "summary omitted keeps",
        [summary_chunk("k", "a"), compaction("k", "completed")],
        ("completed", ["a"], None, None),
    ),
    (
        "summary [] clears",
        [summary_chunk("k", "a"), compaction("k", "failed", summary=[])],
        ("failed", [], None, None),
    ),
    (
        "summary null clears",
        [summary_chunk("k", "a"), compaction("k", "x", summary=None)],
        ("x", [], None, None),
    ),
    (
        "error value then null",
        [compaction("k", "failed", error="boom"), compaction("k", "in_progress", error=None)],
        ("in_progress", [], None, None),
    ),
    (
        "error omitted keeps",
        [compaction("k", "failed", error="boom"), compaction("k", "failed")],
        ("failed", [], "boom", None),
    ),
    (
        "meta key patch",
        [compaction("k", "a", _meta={"x": 1}), compaction("k", "a", _meta={"y": 2})],
        ("a", [], None, {"x": 1, "y": 2}),
    ),
]


@pytest.mark.parametrize(
    ("updates", "expected"),
    [c[1:] for c in COMPACTION_CASES],
    ids=[c[0] for c in COMPACTION_CASES],
)
def test_compaction_updates_are_upserts(
    updates: list[dict[str, Any]], expected: tuple[Any, ...]
) -> None:
    comp = feed(*updates).compactions["k"]
    assert (comp.status, texts(comp.summary), comp.error, comp.meta) == expected


def test_the_first_compaction_update_fixes_its_timeline_position() -> None:
    state = feed(compaction("k", "in_progress"), plan("p", "a"), compaction("k", "completed"))
    assert [type(e) for e in state.timeline] == [CompactionState, PlanState]

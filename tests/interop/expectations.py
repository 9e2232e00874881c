"""Peer-independent checks of a ``ts/client.mjs`` report, one set per scenario.

``check_report(report)`` raises ``AssertionError`` with a readable message when the
agent's behaviour (as seen on the wire, in order) breaks the prompt lifecycle or the
scenario's contract. It relies only on the spec and on the scenario vocabulary that
every test agent implements (see ``README.md``), not on the TypeScript agent's extras
(titles, tool names, id formats).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Event = dict[str, Any]


def updates(report: dict[str, Any], kind: str | None = None) -> list[dict[str, Any]]:
    """The session/update ``update`` objects of the main session, optionally of one kind."""
    sid = report["sessionId"]
    return [
        e["update"]
        for e in report["events"]
        if e["type"] == "update"
        and e["sessionId"] == sid
        and (kind is None or e["update"].get("sessionUpdate") == kind)
    ]


def index_of(events: list[Event], predicate: Callable[[Event], bool], start: int = 0) -> int:
    """Index of the first event from ``start`` matching ``predicate``, or -1."""
    return next((i for i in range(start, len(events)) if predicate(events[i])), -1)


def is_state(state: str) -> Callable[[Event], bool]:
    def match(e: Event) -> bool:
        u = e.get("update") or {}
        return (
            e["type"] == "update"
            and u.get("sessionUpdate") == "state_update"
            and u.get("state") == state
        )

    return match


def is_state_update(e: Event) -> bool:
    return e["type"] == "update" and e["update"].get("sessionUpdate") == "state_update"


def check_turns(report: dict[str, Any]) -> None:
    """Every accepted prompt: user message with its id, running, then an idle with a stop reason."""
    events = report["events"]
    for i, e in enumerate(events):
        if e["type"] != "response" or e["method"] != "session/prompt":
            continue
        message_id = e["result"].get("messageId")
        assert message_id, f"session/prompt answered without messageId (D-09): {e}"
        user = index_of(
            events,
            lambda x, m=message_id: (
                x["type"] == "update"
                and x["update"].get("sessionUpdate") in ("user_message", "user_message_chunk")
                and x["update"].get("messageId") == m
            ),
        )
        assert user >= 0, f"no user_message with messageId {message_id!r}"
        running = index_of(events, is_state("running"), user)
        idle = index_of(events, is_state("idle"), user)
        assert 0 <= running < idle, f"turn {message_id!r}: expected running then idle after {i}"
        assert events[idle]["update"].get("stopReason"), f"idle without stopReason: {events[idle]}"


def check_common(report: dict[str, Any]) -> None:
    assert report["ok"], report.get("error")
    assert report["initialize"]["protocolVersion"] == 2
    wire_updates = [e for e in report["events"] if e["type"] == "update"]
    assert len(report["sdkUpdates"]) == len(wire_updates), (
        f"the TypeScript SDK dropped {len(wire_updates) - len(report['sdkUpdates'])} "
        "session/update notifications it could not parse (see the client's stderr)"
    )
    check_turns(report)


def last_stop(report: dict[str, Any]) -> Any:
    return report["stopReasons"][-1] if report["stopReasons"] else None


def tool_statuses(report: dict[str, Any]) -> list[str]:
    return [u["status"] for u in updates(report, "tool_call_update") if u.get("status")]


def tool_contents(report: dict[str, Any]) -> list[dict[str, Any]]:
    found = [u["content"] for u in updates(report, "tool_call_content_chunk")]
    for u in updates(report, "tool_call_update"):
        found += u.get("content") or []
    return found


def _echo(report: dict[str, Any]) -> None:
    assert "hello world" in report["text"]
    assert last_stop(report) == "end_turn"


def _stream(report: dict[str, Any]) -> None:
    count = report["extra"].get("count")
    chunks = updates(report, "agent_message_chunk")
    if count is not None:
        assert len(chunks) == count
        # Each chunk is the counter followed by a separator ("0," from the TS agent,
        # "0 " from acp2's test agent).
        numbers = [c["content"]["text"].rstrip(", ") for c in chunks]
        assert numbers == [str(i) for i in range(count)], numbers[:10]
    assert len({c["messageId"] for c in chunks}) <= 1, "stream chunks span several messages"
    assert last_stop(report) == "end_turn"


def _permission_flow(report: dict[str, Any]) -> int:
    events = report["events"]
    asked = index_of(events, lambda e: e["type"] == "permission")
    assert asked >= 0, "no session/request_permission"
    kinds = {o["kind"] for o in events[asked]["params"]["options"]}
    assert {"allow_once", "reject_once"} <= kinds, kinds
    first_tool = index_of(
        events, lambda e: e.get("update", {}).get("sessionUpdate") == "tool_call_update"
    )
    assert 0 <= first_tool < asked, "the tool call must be reported before the permission request"
    # The agent reports requires_action for the block; the TS agent sends it right after
    # the request, acp2's agents right before it (both are "while it is open").
    blocked = index_of(events, is_state("requires_action"), first_tool)
    answered = index_of(events, lambda e: e["type"] == "answer" and e["id"] == events[asked]["id"])
    assert blocked >= 0, "no requires_action while the permission was open"
    if blocked < asked:  # still the reported state when the request arrives
        states = [e for e in events[blocked + 1 : asked] if is_state_update(e)]
        assert not states, f"requires_action was replaced before the request: {states}"
    return answered


def _tools_allow(report: dict[str, Any]) -> None:
    answered = _permission_flow(report)
    assert index_of(report["events"], is_state("running"), answered) >= 0, (
        "no running after the answer"
    )
    statuses = tool_statuses(report)
    assert "in_progress" in statuses, statuses
    assert statuses[-1] == "completed", statuses
    assert any(c.get("type") == "diff" for c in tool_contents(report)), "no diff content"
    assert updates(report, "terminal_update")
    assert updates(report, "terminal_output_chunk")
    assert last_stop(report) == "end_turn"


def _tools_reject(report: dict[str, Any]) -> None:
    _permission_flow(report)
    statuses = tool_statuses(report)
    assert statuses[-1] in ("failed", "cancelled"), statuses
    assert "completed" not in statuses, statuses
    assert last_stop(report) == "end_turn"


def _after_cancel(report: dict[str, Any]) -> list[Event]:
    events = report["events"]
    cancel = index_of(events, lambda e: e["type"] == "notify" and e["method"] == "session/cancel")
    assert cancel >= 0
    idles = [e for e in events[cancel:] if is_state("idle")(e)]
    assert [e["update"].get("stopReason") for e in idles] == ["cancelled"], idles
    return events[cancel:]


def _cancel(report: dict[str, Any]) -> None:
    _after_cancel(report)


def _cancel_permission(report: dict[str, Any]) -> None:
    _permission_flow(report)
    _after_cancel(report)
    assert [p["outcome"] for p in report["permissions"]] == [{"outcome": "cancelled"}]


def _cancel_permission_wait(report: dict[str, Any]) -> None:
    _cancel_permission(report)
    asked = next(e for e in report["events"] if e["type"] == "permission")
    withdrawn = [
        e
        for e in report["events"]
        if e["type"] == "notification"
        and e["method"] == "$/cancel_request"
        and e["params"]["requestId"] == asked["id"]
    ]
    assert withdrawn, "the agent did not send $/cancel_request for the permission (D-15)"
    assert report["permissions"][0]["via"] == "$/cancel_request"


def _resume(report: dict[str, Any]) -> None:
    replayed = report["extra"]["replayed"]
    kinds = [u.get("sessionUpdate") for u in replayed]
    assert {"user_message", "user_message_chunk"} & set(kinds), kinds
    assert "state_update" in kinds, "no state snapshot before the resume response (D-14)"
    # The snapshot follows the replayed history; only session-level snapshots (commands)
    # and the Preview's replay_complete (before the snapshot) may sit around it.
    tail = kinds[kinds.index("state_update") + 1 :]
    assert set(tail) <= {"available_commands_update", "config_option_update"}, kinds
    if "replay_complete" in kinds:
        assert kinds.count("replay_complete") == 1, kinds
        assert kinds.index("replay_complete") < kinds.index("state_update"), kinds
    text = "".join(
        u["content"].get("text", "")
        for u in replayed
        if u.get("sessionUpdate") == "agent_message_chunk"
    ) + "".join(
        block.get("text", "")
        for u in replayed
        if u.get("sessionUpdate") == "agent_message"
        for block in u.get("content") or []
    )
    assert "first" in text, replayed
    assert report["text"].endswith("second")
    assert last_stop(report) == "end_turn"


def _list(report: dict[str, Any]) -> None:
    extra = report["extra"]
    both = {report["sessionId"], extra["otherSessionId"]}
    assert both <= {s["sessionId"] for s in extra["all"]["sessions"]}
    assert both <= {s["sessionId"] for s in extra["byCwd"]["sessions"]}
    assert extra["otherCwd"]["sessions"] == []


def _close(report: dict[str, Any]) -> None:
    events = report["events"]
    close = index_of(events, lambda e: e["type"] == "request" and e["method"] == "session/close")
    answer = index_of(
        events,
        lambda e: e.get("id") == events[close]["id"] and e["type"] in ("response", "error"),
        close + 1,
    )
    idle = index_of(events, is_state("idle"), close)
    assert 0 <= idle < answer, "idle must come before the session/close response (D-16)"
    assert events[idle]["update"].get("stopReason") == "cancelled"
    unknown = [
        e for e in events if e["type"] in ("response", "error") and e["method"] == "session/close"
    ][1]
    assert unknown["type"] == "response" or unknown["error"]["code"] == -32002, unknown


def _ext(report: dict[str, Any]) -> None:
    kinds = [u.get("sessionUpdate") for u in updates(report)]
    assert "_acp2/custom" in kinds, kinds
    assert any(u.get("_meta") for u in updates(report)), "no update carried _meta"
    extra = report["extra"]
    meta = report["initialize"].get("_meta") or {}
    if "_acp2/echo" in (meta.get("acp2/test") or {}).get("extMethods", []):
        assert extra.get("echo") == {"echoed": {"value": 42}}, extra
    else:  # an agent without the extension answers "method not found"
        assert (extra.get("echoError") or {}).get("code") == -32601, extra
    assert last_stop(report) == "end_turn"


KINDS = {
    "agent_thought_chunk",
    "plan_update",
    "usage_update",
    "available_commands_update",
    "notice",
    "compaction_update",
    "compaction_summary_chunk",
}


def _kinds(report: dict[str, Any]) -> None:
    missing = KINDS - {u.get("sessionUpdate") for u in updates(report)}
    assert not missing, f"missing update kinds: {sorted(missing)}"
    assert last_stop(report) == "end_turn"


def _fail(report: dict[str, Any]) -> None:
    assert last_stop(report) == "error"


def _background(report: dict[str, Any]) -> None:
    """RFD "v2 Background Work": the turn's idle lists items the agent announced first
    (advertising ``cancel``); each cancel is accepted with ``{}``, and the item's final
    update comes before the snapshot that no longer lists it."""
    listed = report["extra"]["listed"]
    assert listed, "the turn's idle listed no background work"
    assert [c["result"] for c in report["extra"]["cancelled"]] == [{}] * len(listed)
    seen = updates(report)
    for item in listed:
        key, value = ("terminalId", item["terminalId"]) if item["type"] == "terminal" else (
            "toolCallId", item["toolCallId"])  # fmt: skip
        mine = [i for i, u in enumerate(seen) if u.get(key) == value]
        assert any(seen[i].get("capabilities", {}).get("cancel") == {} for i in mine)
        final = next(
            i for i in mine if seen[i].get("status") == "cancelled" or "exitStatus" in seen[i]
        )
        dropped = next(
            i
            for i, u in enumerate(seen)
            if u.get("sessionUpdate") == "state_update"
            and isinstance(u.get("background"), list)
            and item not in u["background"]
            and i > mine[0]
        )
        assert final < dropped, f"{value}: dropped from the list before its final update"


CHECKS: dict[str, Callable[[dict[str, Any]], None]] = {
    "echo": _echo,
    "stream": _stream,
    "tools-allow": _tools_allow,
    "tools-reject": _tools_reject,
    "cancel": _cancel,
    "cancel-permission": _cancel_permission,
    "cancel-permission-wait": _cancel_permission_wait,
    "resume": _resume,
    "list": _list,
    "close": _close,
    "ext": _ext,
    "kinds": _kinds,
    "fail": _fail,
    "background": _background,
}


def check_report(report: dict[str, Any]) -> None:
    """Assert the lifecycle and the scenario contract on a client report."""
    check_common(report)
    CHECKS[report["scenario"]](report)

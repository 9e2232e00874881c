"""Peer-independent checks of a ``py/v1_client.py`` report (ACP v1), per scenario.

``check_v1_report(report)`` raises ``AssertionError`` when the agent breaks v1's prompt
lifecycle (every update of a turn arrives while its ``session/prompt`` is open, the
prompt is answered once with a ``stopReason``) or the scenario's contract (see the
docstring of ``py/v1_agent.py``). A tool call must be created with ``tool_call``
before any ``tool_call_update`` patches it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Report = dict[str, Any]


def v1_updates(report: Report, kind: str | None = None) -> list[dict[str, Any]]:
    """The ``update`` objects of the main session as they crossed the wire."""
    return [
        e["update"]
        for e in report["events"]
        if e["type"] == "update"
        and e["sessionId"] == report["sessionId"]
        and (kind is None or e["update"].get("sessionUpdate") == kind)
    ]


def _open_windows(report: Report) -> None:
    """Each update lies inside an open session/prompt or session/load request."""
    open_ids: set[Any] = set()
    for event in report["events"]:
        if event["type"] == "request" and event["method"] in ("session/prompt", "session/load"):
            open_ids.add(event["id"])
        elif event["type"] in ("response", "error") and event["id"] in open_ids:
            open_ids.discard(event["id"])
        elif event["type"] == "update":
            assert open_ids, f"an update outside any open prompt or load: {event['update']}"


def _answered_once(report: Report) -> None:
    prompts = [
        e["id"]
        for e in report["events"]
        if e.get("method") == "session/prompt" and e["type"] == "request"
    ]
    for rid in prompts:
        answers = [
            e for e in report["events"] if e["type"] in ("response", "error") and e["id"] == rid
        ]
        assert len(answers) == 1, f"session/prompt {rid!r} answered {len(answers)} times"
        if answers[0]["type"] == "response":
            assert answers[0]["result"].get("stopReason"), answers[0]


def _tool_calls_created_first(report: Report) -> None:
    created: set[str] = set()
    for update in v1_updates(report):
        if update["sessionUpdate"] == "tool_call":
            created.add(update["toolCallId"])
        elif update["sessionUpdate"] == "tool_call_update":
            assert update["toolCallId"] in created, f"patched before created: {update}"


def check_v1_common(report: Report) -> None:
    """The v1 lifecycle, whatever the scenario."""
    assert report["ok"], report.get("error")
    assert report["initialize"]["protocolVersion"] == 1
    wire = [e for e in report["events"] if e["type"] == "update"]
    assert len(report["sdkUpdates"]) == len(wire), "the SDK dropped updates it could not parse"
    _open_windows(report)
    _answered_once(report)
    _tool_calls_created_first(report)


def tool_statuses(report: Report) -> list[str]:
    return [
        u["status"]
        for u in v1_updates(report)
        if u["sessionUpdate"].startswith("tool_call") and u.get("status")
    ]


def _stops(*expected: Any) -> Callable[[Report], None]:
    def check(report: Report) -> None:
        assert report["stopReasons"] == list(expected), report["stopReasons"]

    return check


def _permission(report: Report) -> dict[str, Any]:
    (asked,) = [e for e in report["events"] if e["type"] == "permission"]
    kinds = {o["kind"] for o in asked["params"]["options"]}
    assert {"allow_once", "reject_once"} <= kinds, kinds
    created = [u["toolCallId"] for u in v1_updates(report, "tool_call")]
    assert asked["params"]["toolCall"]["toolCallId"] in created
    return asked


def _echo(report: Report) -> None:
    assert report["text"] == "hello world"
    _stops("end_turn")(report)


def _stream(report: Report) -> None:
    chunks = [u["content"]["text"].rstrip(", ") for u in v1_updates(report, "agent_message_chunk")]
    assert chunks == [str(i) for i in range(report["extra"]["count"])], chunks[:10]
    _stops("end_turn")(report)


def _tools_allow(report: Report) -> None:
    _permission(report)
    statuses = tool_statuses(report)
    assert statuses[0] == "pending"
    assert "in_progress" in statuses
    assert statuses[-1] == "completed"
    contents = [c for u in v1_updates(report, "tool_call_update") for c in u.get("content") or []]
    assert any(c["type"] == "diff" and c["newText"] for c in contents), contents
    _stops("end_turn")(report)


def _tools_reject(report: Report) -> None:
    _permission(report)
    assert tool_statuses(report)[-1] == "failed"
    _stops("end_turn")(report)


def _cancel_before_answer(report: Report) -> None:
    events = report["events"]
    cancel = next(i for i, e in enumerate(events) if e.get("method") == "session/cancel")
    prompt = next(i for i, e in enumerate(events) if e.get("method") == "session/prompt")
    answer = next(
        i
        for i, e in enumerate(events)
        if e["type"] == "response" and e["id"] == events[prompt]["id"]
    )
    assert cancel < answer, "the prompt was answered before the cancel"
    _stops("cancelled")(report)


def _cancel_permission(report: Report) -> None:
    _permission(report)
    assert [p["outcome"] for p in report["permissions"]] == [{"outcome": "cancelled"}]
    assert tool_statuses(report)[-1] == "failed"  # v1's tool statuses have no "cancelled"
    _cancel_before_answer(report)


def _load(report: Report) -> None:
    kinds = [u["sessionUpdate"] for u in report["extra"]["replayed"]]
    assert kinds[:1] == ["user_message_chunk"], kinds
    assert "agent_message_chunk" in kinds, kinds
    assert report["text"] == "first" + "first" + "second"  # live, replayed, live
    _stops("end_turn", "end_turn")(report)


def _kinds(report: Report) -> None:
    kinds = {u["sessionUpdate"] for u in v1_updates(report)}
    assert {"agent_thought_chunk", "plan", "available_commands_update"} <= kinds, kinds
    _stops("end_turn")(report)


def _fail(report: Report) -> None:
    assert report["extra"]["promptErrors"] == [{"code": -32603}]


CHECKS: dict[str, Callable[[Report], None]] = {
    "echo": _echo,
    "stream": _stream,
    "tools-allow": _tools_allow,
    "tools-reject": _tools_reject,
    "cancel": _cancel_before_answer,
    "cancel-permission": _cancel_permission,
    "load": _load,
    "kinds": _kinds,
    "fail": _fail,
}


def check_v1_report(report: Report) -> None:
    """Assert the v1 lifecycle and the scenario contract on a v1 client report."""
    check_v1_common(report)
    CHECKS[report["scenario"]](report)

"""Peer-independent checks of a ``py/v1_client.py`` report (ACP v1), per scenario.

``check_v1_report(report)`` raises ``AssertionError`` when the agent breaks v1's prompt
lifecycle (every update of a turn arrives while its ``session/prompt`` is open, the
prompt is answered once with a ``stopReason``) or the scenario's contract (see the
docstring of ``py/v1_agent.py``). A tool call must be created with ``tool_call``
before any ``tool_call_update`` patches it.

The TypeScript v1 client (``ts/v1_client.mjs``) runs several scenarios on one
connection; ``scenario_reports`` splits its report into one report per scenario, in
the shape the checks take. ``valid_v1_wire`` / ``stop_reasons`` read a tap log.

The last section holds what the tests of acp2's client against the v1 agents (Python
SDK 0.12.1, TypeScript SDK 2.4.0 stable) share: cancel cases played against either
agent (``cancel_mid_turn``, ``cancel_during_permission``), ``acp2_run`` and
``check_selected``.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import anyio

from acp2.client import PermissionRequest, connect
from acp2.schema import StateUpdate
from helpers.timeouts import SCENARIO_TIMEOUT

from .test_acp2_client_vs_ts_agent import agent_requests, client_answers, index, is_sent
from .v1_schema import validate_v1_log
from .wire import Frame, read_log, selected

Report = dict[str, Any]


def scenario_reports(report: Report) -> dict[str, Report]:
    """One report per run of a ``ts/v1_client.mjs`` report, keyed by scenario: the run's
    events, updates and results under the connection's ``ok`` / ``initialize``."""
    base = {k: report[k] for k in ("ok", "initialize", "agentArgv", "agentExit")}
    return {run["scenario"]: base | run for run in report["runs"]}


def valid_v1_wire(log: Path) -> list[Frame]:
    """The tapped frames, after asserting each is valid under the v1 schema."""
    assert validate_v1_log(log) == []
    return read_log(log)


def check_client_wire(report: Report, log: Path) -> None:
    """A v1 client's whole run against a tapped agent: the tap saw exactly the client's
    traffic, every frame is valid v1, and the agent exited 0 when its stdin closed."""
    assert len(read_log(log)) == len(report["events"]), (
        "the tap and the client saw different traffic"
    )
    assert report["agentExit"] == {"code": 0, "signal": None}
    assert validate_v1_log(log) == []


def stop_reasons(frames: list[Frame]) -> list[str]:
    """The ``stopReason`` of every ``session/prompt`` answer on the wire, in order
    (error answers have none)."""
    results = [f.message.get("result") or {} for f in frames if f.sender == "agent"]
    return [r["stopReason"] for r in results if "stopReason" in r]


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


def _read(report: Report) -> None:
    """``read`` (TS peers only): the agent read the file through the client's
    ``fs/read_text_file`` and said its text; the tool call completed with it."""
    (read,) = report["extra"]["reads"]
    assert read.get("ok"), read
    (call,) = v1_updates(report, "tool_call")
    assert (call["kind"], call["locations"]) == ("read", [{"path": read["path"]}])
    assert tool_statuses(report)[-1] == "completed"
    (done,) = v1_updates(report, "tool_call_update")
    assert [c["content"]["text"] for c in done["content"]] == [report["text"]]
    _stops("end_turn")(report)


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

#: The checks of the TypeScript v1 peers' scenarios: ``CHECKS`` and ``read``.
TS_CHECKS: dict[str, Callable[[Report], None]] = CHECKS | {"read": _read}


def check_v1_report(report: Report) -> None:
    """Assert the v1 lifecycle and the scenario contract on a v1 client report (one
    scenario's: see ``scenario_reports``)."""
    check_v1_common(report)
    TS_CHECKS[report["scenario"]](report)


# ---------------------------------------------------------------- acp2's client, a v1 agent


async def cancel_mid_turn(agent: Sequence[str], cwd: Path, log: Path) -> None:
    """acp2's client cancels a v1 agent's ``wait`` turn once it runs: the work ends
    ``cancelled`` after a ``session/cancel`` on the wire, and the session takes the next
    prompt (``agent`` is tapped into ``log``)."""
    with anyio.fail_after(SCENARIO_TIMEOUT):
        async with connect(agent, cwd=cwd) as client:
            session = await client.new_session()
            work = await session.prompt("wait")
            async for update in work:
                if isinstance(update, StateUpdate) and update.state == "running":
                    break
            assert await work.cancel() == "cancelled"
            assert session.state.stop_reason == "cancelled"
            again = await session.prompt("echo again")
            assert await again.wait() == "end_turn"
            assert again.text == "again"

    frames = valid_v1_wire(log)
    assert index(frames, is_sent("session/cancel")) > 0
    assert stop_reasons(frames) == ["cancelled", "end_turn"]


async def cancel_during_permission(agent: Sequence[str], cwd: Path, log: Path) -> None:
    """acp2's client cancels a v1 ``tools`` turn while its permission is open and the
    user has not answered: the work ends ``cancelled``, the tool call ``failed`` (or
    ``cancelled``), and the permission is answered ``cancelled`` once (the v1 rule)."""
    asked = anyio.Event()

    async def hold(request: PermissionRequest) -> None:
        asked.set()
        await anyio.sleep_forever()  # a user who never answers

    with anyio.fail_after(SCENARIO_TIMEOUT):
        async with connect(agent, cwd=cwd, permissions=hold) as client:
            session = await client.new_session()
            work = await session.prompt("tools")
            await asked.wait()
            await session.cancel()
            assert await work.wait() == "cancelled"
            (call,) = session.state.tool_calls.values()
            assert call.status in ("cancelled", "failed")

    frames = valid_v1_wire(log)
    (request,) = agent_requests(frames, "session/request_permission")
    answers = client_answers(frames, request["id"])
    assert [a.get("result") for a in answers] == [{"outcome": {"outcome": "cancelled"}}]
    assert stop_reasons(frames) == ["cancelled"]


def check_selected(frames: list[Frame], kind: str, *, implicit: bool = False) -> None:
    """The one permission request on the wire was answered with its ``kind`` option
    (marked implicit when a policy gave it without asking, :func:`wire.selected`)."""
    (asked,) = agent_requests(frames, "session/request_permission")
    (option,) = [o for o in asked["params"]["options"] if o["kind"] == kind]
    (answer,) = client_answers(frames, asked["id"])
    assert answer["result"] == selected(option["optionId"], implicit=implicit)


def acp2_run(
    cwd: Path, agent: Sequence[str], prompt: str, *options: str
) -> subprocess.CompletedProcess[str]:
    """``acp2 run`` (a subprocess) of ``prompt`` in ``cwd`` against ``agent``."""
    argv = [sys.executable, "-m", "acp2", "run", "--cwd", str(cwd)]
    argv += ["--timeout", str(SCENARIO_TIMEOUT), *options, prompt, "--", *agent]
    return subprocess.run(
        argv,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=SCENARIO_TIMEOUT + 15,
    )

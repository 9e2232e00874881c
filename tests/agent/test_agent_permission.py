"""session/request_permission from the agent runtime (PR-02..PR-11, PL-09)."""

from __future__ import annotations

from typing import Any

import pytest
from agent_harness import agent_harness, make_agent, select

from acp2.agent import PermissionResult, Turn, default_options
from acp2.errors import InternalError, RequestCancelled
from acp2.schema import PermissionOption, RequestPermissionRequest

pytestmark = pytest.mark.anyio


def _asking_agent(results: list[PermissionResult], **ask: Any) -> Any:
    agent = make_agent()

    @agent.prompt
    async def handle(turn: Turn) -> str:
        call = await turn.tool_call("Delete build/", kind="delete")
        answer = await turn.request_permission("Delete build/?", tool_call=call, **ask)
        results.append(answer)
        if answer.approved:
            await call.start()
            await call.complete()
        else:
            await call.fail()
        return "end_turn"

    return agent


async def _run(policy: Any, **ask: Any) -> tuple[PermissionResult, Any]:
    results: list[PermissionResult] = []
    async with agent_harness(_asking_agent(results, **ask), initialize=True) as h:
        h.permission = policy
        sid = await h.new_session()
        await h.turn(sid, "go")
    return results[0], h


async def test_pl09_requires_action_while_waiting_and_running_after() -> None:
    answer, h = await _run(select("allow_once"))
    states = [u["state"] for u in h.updates() if u["sessionUpdate"] == "state_update"]
    assert states == ["running", "requires_action", "running", "idle"]
    blocked = h.index(lambda f: f.update is not None and f.update.get("state") == "requires_action")
    asked = h.index(lambda f: f.method == "session/request_permission")
    answered = h.response_index(h.frames[asked].message["id"], sender="client")
    resumed = h.index(
        lambda f: f.update is not None and f.update.get("state") == "running", answered
    )
    assert blocked < asked < answered < resumed
    assert answer.approved
    assert not answer.always


async def test_pr02_the_request_carries_title_options_and_the_tool_call_subject() -> None:
    _, h = await _run(select("allow_once"), description="It is big")
    (request,) = h.requests("session/request_permission", sender="agent")
    params = request.message["params"]
    call_id = h.updates()[2]["toolCallId"]
    assert params["title"] == "Delete build/?"
    assert params["description"] == "It is big"
    assert params["subject"] == {"type": "tool_call", "toolCall": {"toolCallId": call_id}}
    assert [o["optionId"] for o in params["options"]] == [
        "allow_once",
        "allow_always",
        "reject_once",
        "reject_always",
    ]


async def test_pr04_a_command_subject_carries_an_absolute_cwd() -> None:
    _, h = await _run(select("allow_once"), command="rm -rf build")
    (request,) = h.requests("session/request_permission", sender="agent")
    subject = request.message["params"]["subject"]
    assert subject["type"] == "command"
    assert subject["command"] == "rm -rf build"
    assert subject["cwd"].startswith("/")
    assert subject["toolCallId"] == h.updates()[2]["toolCallId"]


async def test_pr05_allow_always_is_approved_and_remembered() -> None:
    answer, _ = await _run(select("allow_always"))
    assert answer.approved
    assert answer.always
    assert answer.option is not None
    assert answer.option.option_id == "allow_always"


@pytest.mark.parametrize("option_id", ["reject_once", "reject_always"])
async def test_pr05_a_reject_option_is_not_approval(option_id: str) -> None:
    answer, h = await _run(select(option_id))
    assert not answer.approved
    assert answer.outcome == "selected"
    statuses = [u.get("status") for u in h.updates() if u["sessionUpdate"] == "tool_call_update"]
    assert statuses == ["pending", "failed"]


async def test_pr08_an_option_id_that_was_not_offered_is_not_approval() -> None:
    answer, _ = await _run(select("allow_everything"))
    assert not answer.approved
    assert answer.outcome == "invalid"
    assert answer.option is None


async def test_pr08_a_custom_options_list_is_what_counts_as_offered() -> None:
    options = [
        PermissionOption(option_id="yes", name="Yes", kind="allow_once"),
        PermissionOption(option_id="no", name="No", kind="reject_once"),
    ]
    answer, _ = await _run(select("yes"), options=options)
    assert answer.approved
    refused, _ = await _run(select("allow_once"), options=options)  # a default id, not offered
    assert not refused.approved


@pytest.mark.parametrize(
    "result",
    [
        {"outcome": {"outcome": "_maybe"}},
        {"outcome": "_maybe"},
        {"outcome": {"outcome": "selected"}},
        {},
        {"outcome": None},
    ],
    ids=["unknown-outcome", "outcome-not-an-object", "selected-without-id", "empty", "null"],
)
async def test_pr08_an_unknown_or_malformed_outcome_is_not_approval_and_the_turn_goes_on(
    result: Any,
) -> None:
    async def policy(request: RequestPermissionRequest) -> Any:
        return result

    results: list[PermissionResult] = []
    async with agent_harness(_asking_agent(results), initialize=True, validate="agent") as h:
        h.permission = policy
        sid = await h.new_session()
        idle = await h.turn(sid, "go")
    assert not results[0].approved
    assert results[0].outcome == "invalid"
    assert idle["stopReason"] == "end_turn"


async def test_pr07_a_cancelled_outcome_is_not_approval() -> None:
    async def policy(request: RequestPermissionRequest) -> Any:
        return {"outcome": {"outcome": "cancelled"}}

    answer, _ = await _run(policy)
    assert answer.outcome == "cancelled"
    assert not answer.approved


async def test_pr10_a_32800_error_answer_counts_as_cancelled() -> None:
    async def policy(request: RequestPermissionRequest) -> Any:
        raise RequestCancelled()

    answer, h = await _run(policy)
    assert answer.outcome == "cancelled"
    assert not answer.approved
    states = [u["state"] for u in h.updates() if u["sessionUpdate"] == "state_update"]
    assert states == ["running", "requires_action", "running", "idle"]


async def test_pr10_another_error_answer_is_not_approval() -> None:
    async def policy(request: RequestPermissionRequest) -> Any:
        raise InternalError("the UI crashed")

    answer, _ = await _run(policy)
    assert answer.outcome == "invalid"
    assert not answer.approved


def test_default_options_offer_the_four_standard_kinds_with_unique_ids() -> None:
    options = default_options()
    assert [o.kind for o in options] == [
        "allow_once",
        "allow_always",
        "reject_once",
        "reject_always",
    ]
    assert len({o.option_id for o in options}) == 4

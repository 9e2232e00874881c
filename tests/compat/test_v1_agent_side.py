"""An acp2 agent serving a v1 client: v1 requests lift to v2, v2 answers project to v1."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from v1_check import assert_v1, assert_v2
from v1_testdata import METHOD_EXAMPLES

import acp2.compat.v1.schema as v1
import acp2.schema as v2
from acp2.compat.v1 import agent_side as a
from acp2.schema.codec import decode, encode


def _v1_params(method: str, tp: Any) -> Any:
    params = next(p for m, p, _ in METHOD_EXAMPLES if m == method)
    return decode(encode(params), tp)


def test_session_new_lifts_mcp_servers_and_drops_sse_ones() -> None:
    dropped: Counter[str] = Counter()
    request = _v1_params("session/new", v1.NewSessionRequest)
    out = assert_v2(a.new_session_request_from_v1(request, dropped), "NewSessionRequest")
    assert [s["type"] for s in out["mcpServers"]] == ["stdio", "http"]
    assert out["mcpServers"][0]["args"] == ["--root", "/w"]
    assert dropped["mcp_server.sse"] == 1


def test_session_load_is_a_resume_replaying_from_the_start_and_resume_replays_nothing() -> None:
    load = a.load_request_from_v1(_v1_params("session/load", v1.LoadSessionRequest), Counter())
    assert assert_v2(load, "ResumeSessionRequest")["replayFrom"] == {"type": "start"}
    resume = a.resume_request_from_v1(
        _v1_params("session/resume", v1.ResumeSessionRequest), Counter()
    )
    assert "replayFrom" not in assert_v2(resume, "ResumeSessionRequest")


def _v2_options() -> list[Any]:
    return [
        v2.SessionConfigSelect(
            config_id="mode",
            name="Mode",
            category="mode",
            current_value="ask",
            options=[
                v2.SessionConfigSelectOption(value="ask", name="Ask"),
                v2.SessionConfigSelectOption(value="code", name="Code", description="Edits"),
            ],
        ),
        v2.SessionConfigBoolean(config_id="web", name="Web", current_value=False),
    ]


def test_the_new_session_result_offers_the_mode_option_as_v1_modes_too() -> None:
    dropped: Counter[str] = Counter()
    result = v2.NewSessionResponse(
        session_id="s1",
        config_options=_v2_options(),
        available_commands=[v2.AvailableCommand(name="x", description="X")],
    )
    out = assert_v1(
        a.new_session_result_to_v1(result, booleans=False, dropped=dropped), "NewSessionResponse"
    )
    assert out["modes"] == {
        "currentModeId": "ask",
        "availableModes": [
            {"id": "ask", "name": "Ask"},
            {"id": "code", "name": "Code", "description": "Edits"},
        ],
    }
    assert [o["id"] for o in out["configOptions"]] == ["mode"]
    assert dropped == Counter({"config_option.boolean": 1, "session.available_commands": 1})
    assert a.mode_option(result.config_options) is result.config_options[0]  # type: ignore[index]


def test_the_resume_result_answers_a_v1_load() -> None:
    result = v2.ResumeSessionResponse(config_options=_v2_options())
    out = assert_v1(
        a.resume_result_to_v1(result, booleans=True, dropped=Counter()), "LoadSessionResponse"
    )
    assert [o["id"] for o in out["configOptions"]] == ["mode", "web"]
    assert out["modes"]["currentModeId"] == "ask"
    assert "modes" not in to_v1_plain(v2.ResumeSessionResponse())


def to_v1_plain(result: v2.ResumeSessionResponse) -> dict[str, Any]:
    return assert_v1(
        a.resume_result_to_v1(result, booleans=True, dropped=Counter()), "LoadSessionResponse"
    )


def test_set_mode_becomes_set_config_option_on_the_mode_option() -> None:
    request = _v1_params("session/set_mode", v1.SetSessionModeRequest)
    out = assert_v2(a.set_mode_from_v1(request, "mode"), "SetSessionConfigOptionRequest")
    assert out == {"sessionId": "s1", "configId": "mode", "type": "id", "value": "code"}


def test_set_config_option_gains_its_v2_type() -> None:
    by_id = a.set_config_option_from_v1(
        _v1_params("session/set_config_option", v1.SetSessionConfigOptionRequest)
    )
    assert assert_v2(by_id, "SetSessionConfigOptionRequest")["type"] == "id"
    boolean = v1.SetSessionConfigOptionRequest(
        session_id="s", config_id="web", value=True, type="boolean"
    )
    assert (
        assert_v2(a.set_config_option_from_v1(boolean), "SetSessionConfigOptionRequest")["type"]
        == "boolean"
    )
    result = v2.SetSessionConfigOptionResponse(config_options=_v2_options())
    out = assert_v1(
        a.set_config_option_result_to_v1(result, booleans=False, dropped=Counter()),
        "SetSessionConfigOptionResponse",
    )
    assert [o["id"] for o in out["configOptions"]] == ["mode"]


def test_prompts_and_cancels_lift_to_v2() -> None:
    prompt = a.prompt_request_from_v1(_v1_params("session/prompt", v1.PromptRequest))
    out = assert_v2(prompt, "PromptRequest")
    assert [b["type"] for b in out["prompt"]] == [
        "text",
        "image",
        "audio",
        "resource_link",
        "resource",
        "resource",
    ]
    cancel = a.cancel_from_v1(v1.CancelNotification(session_id="s1"))
    assert assert_v2(cancel, "CancelSessionNotification") == {"sessionId": "s1"}


@pytest.mark.parametrize(
    "reason", ["end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"]
)
def test_a_v1_stop_reason_answers_the_held_prompt_unchanged(reason: str) -> None:
    dropped: Counter[str] = Counter()
    answer = a.prompt_result_to_v1(v2.StateUpdate(state="idle", stop_reason=reason), dropped)
    assert assert_v1(answer, "PromptResponse") == {"stopReason": reason}
    assert not dropped


def test_unknown_or_missing_stop_reasons_answer_end_turn_and_are_counted() -> None:
    dropped: Counter[str] = Counter()
    assert (
        a.prompt_result_to_v1(
            v2.StateUpdate(state="idle", stop_reason="_paused"), dropped
        ).stop_reason
        == "end_turn"
    )
    assert a.prompt_result_to_v1(v2.StateUpdate(state="idle"), dropped).stop_reason == "end_turn"
    assert dropped == Counter({"stop_reason.unknown": 1, "stop_reason.missing": 1})


def test_an_error_stop_reason_raises_prompt_failed_with_the_error() -> None:
    error = v2.Error(code=-32000, message="model down")
    with pytest.raises(a.PromptFailed, match="model down") as info:
        a.prompt_result_to_v1(
            v2.StateUpdate(state="idle", stop_reason="error", error=error), Counter()
        )
    assert info.value.error is error
    with pytest.raises(a.PromptFailed) as bare:
        a.prompt_result_to_v1(v2.StateUpdate(state="idle", stop_reason="error"), Counter())
    assert bare.value.error.code == -32603


def test_a_v1_permission_answer_approves_only_an_offered_option() -> None:
    chosen = v1.RequestPermissionResponse(outcome=v1.SelectedPermissionOutcome(option_id="y"))
    out = assert_v2(a.permission_result_from_v1(chosen, {"y", "n"}), "RequestPermissionResponse")
    assert out == {"outcome": {"outcome": "selected", "optionId": "y"}}
    for outcome in (
        v1.SelectedPermissionOutcome(option_id="zzz"),
        v1.CancelledPermissionOutcome(),
        decode(b'{"outcome":"_later"}', v1.RequestPermissionOutcome),
    ):
        answer = a.permission_result_from_v1(v1.RequestPermissionResponse(outcome=outcome), {"y"})
        assert isinstance(answer.outcome, v2.CancelledPermissionOutcome)

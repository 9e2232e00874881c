"""The frame validator used by the interop tests (tests/schema_validation.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from schema_validation import (
    Conversation,
    check_log,
    draft_schema,
    validate_frame,
    validate_log,
)

DRAFTS = ("aug", "nov")
SID = "sess_1"


def update(body: dict[str, Any]) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": SID, "update": body},
    }


def request(rid: Any, method: str, params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}


INITIALIZE = request(0, "initialize", {"protocolVersion": 2, "info": {"name": "c", "version": "1"}})
PROMPT = request(
    2, "session/prompt", {"sessionId": SID, "prompt": [{"type": "text", "text": "hi"}]}
)
PERMISSION = request(
    0,
    "session/request_permission",
    {
        "sessionId": SID,
        "title": "Run it?",
        "options": [{"optionId": "a", "name": "Allow", "kind": "allow_once"}],
    },
)
CHUNK = update(
    {
        "sessionUpdate": "agent_message_chunk",
        "messageId": "m1",
        "content": {"type": "text", "text": "x"},
    }
)

# (frame, sender, ids the other side has pending) valid under both drafts.
VALID = {
    "client request": (INITIALIZE, "client", {}),
    "agent request": (PERMISSION, "agent", {}),
    "agent notification": (CHUNK, "agent", {}),
    "client notification": (
        {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": SID}},
        "client",
        {},
    ),
    "cancel_request either way": (
        {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 4}},
        "agent",
        {},
    ),
    "agent response": (
        {"jsonrpc": "2.0", "id": 2, "result": {"messageId": "u1"}},
        "agent",
        {2: "session/prompt"},
    ),
    "client response": (
        {
            "jsonrpc": "2.0",
            "id": 0,
            "result": {"outcome": {"outcome": "selected", "optionId": "a"}},
        },
        "client",
        {0: "session/request_permission"},
    ),
    "error response": (
        {"jsonrpc": "2.0", "id": 7, "error": {"code": -32602, "message": "bad"}},
        "agent",
        {7: "session/new"},
    ),
    "parse error with null id": (
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "x"}},
        "agent",
        {},
    ),
    "extension request": (request("x", "_acp2/echo", {"anything": [1]}), "client", {}),
    "extension response": (
        {"jsonrpc": "2.0", "id": "x", "result": 5},
        "agent",
        {"x": "_acp2/echo"},
    ),
    "unknown update variant": (update({"sessionUpdate": "_acp2/custom", "n": 1}), "agent", {}),
    "params omitted where none are required": (
        {"jsonrpc": "2.0", "id": 3, "method": "session/list"},
        "client",
        {},
    ),
}

# (frame, sender, pending, draft or None for both, expected fragment of the message)
INVALID = {
    "missing required field": (
        update({"sessionUpdate": "agent_message_chunk", "messageId": "m"}),
        "agent",
        {},
        None,
        "params.update: 'content' is a required property",
    ),
    "wrong type deep inside": (
        update(
            {
                "sessionUpdate": "agent_message_chunk",
                "messageId": "m",
                "content": {"type": "text", "text": 3},
            }
        ),
        "agent",
        {},
        None,
        "params.update.content.text: 3 is not of type 'string'",
    ),
    "wrong jsonrpc version": (
        {**CHUNK, "jsonrpc": "1.0"},
        "agent",
        {},
        None,
        "jsonrpc must be '2.0'",
    ),
    "wrong direction": (PROMPT, "agent", {}, None, "is handled by the agent, not sent by it"),
    "notification sent as request": (
        request(1, "session/cancel", {"sessionId": SID}),
        "client",
        {},
        None,
        "must be sent as a notification",
    ),
    "unknown method": (request(1, "session/load", {}), "client", {}, None, "unknown method"),
    "Nov-only method under Aug": (
        request(1, "tool_call/cancel", {"sessionId": SID, "toolCallId": "t"}),
        "client",
        {},
        "aug",
        "unknown method in the aug draft",
    ),
    "response to nothing": (
        {"jsonrpc": "2.0", "id": 9, "result": {}},
        "agent",
        {},
        None,
        "answers no request",
    ),
    "result and error": (
        {"jsonrpc": "2.0", "id": 9, "result": {}, "error": {}},
        "agent",
        {9: "session/new"},
        None,
        "exactly one of",
    ),
    "bad error object": (
        {"jsonrpc": "2.0", "id": 9, "error": {"code": -1}},
        "agent",
        {9: "session/new"},
        None,
        "'message' is a required property",
    ),
    "empty prompt result under Nov (D-09)": (
        {"jsonrpc": "2.0", "id": 2, "result": {}},
        "agent",
        {2: "session/prompt"},
        "nov",
        "'messageId' is a required property",
    ),
    "null request id under Nov (D-02)": (
        request(None, "session/list", {}),
        "client",
        {},
        "nov",
        "id: None is not valid",
    ),
    "batch under Nov (D-01)": (
        [CHUNK],
        "agent",
        {},
        "nov",
        "batches are not part of the Nov draft",
    ),
    "empty prompt under Nov (D-10)": (
        request(2, "session/prompt", {"sessionId": SID, "prompt": []}),
        "client",
        {},
        "nov",
        "params.prompt: [] should be non-empty",
    ),
}


@pytest.mark.parametrize("draft", DRAFTS)
@pytest.mark.parametrize("case", VALID)
def test_a_valid_frame_of_each_kind_passes(case: str, draft: str) -> None:
    frame, sender, pending = VALID[case]

    assert validate_frame(frame, sender, draft, request_methods=pending) == []


@pytest.mark.parametrize("case", INVALID)
def test_an_invalid_frame_fails_with_a_readable_message(case: str) -> None:
    frame, sender, pending, only, expected = INVALID[case]
    for draft in [only] if only else DRAFTS:
        problems = validate_frame(frame, sender, draft, request_methods=pending)

        assert problems, f"{case} passed under {draft}"
        assert any(expected in p for p in problems), problems
        assert all(len(p) <= 400 for p in problems)


def test_nov_only_fields_pass_under_aug_because_aug_objects_are_open() -> None:
    # No definition in either schema sets additionalProperties: false.
    frames = [
        ({"jsonrpc": "2.0", "id": 2, "result": {"messageId": "u1"}}, {2: "session/prompt"}),
        (update({"sessionUpdate": "tool_call_update", "toolCallId": "t", "name": "edit"}), {}),
        (
            update(
                {
                    "sessionUpdate": "state_update",
                    "state": "idle",
                    "stopReason": "error",
                    "error": {"code": 1, "message": "m"},
                }
            ),
            {},
        ),
        (update({"sessionUpdate": "notice", "severity": "info", "title": "t"}), {}),
    ]
    for frame, pending in frames:
        assert validate_frame(frame, "agent", "aug", request_methods=pending) == []


def test_aug_batches_are_validated_item_by_item() -> None:
    batch = [CHUNK, update({"sessionUpdate": "state_update"})]

    problems = validate_frame(batch, "agent", "aug", request_methods={})

    assert len(problems) == 1
    assert problems[0].startswith("batch[1] ")


def test_a_conversation_tracks_request_ids_per_direction() -> None:
    talk = Conversation("nov")
    assert talk.validate(PROMPT, "client") == []
    # The agent's own request 2 is a different id space from the client's request 2.
    assert talk.validate({**PERMISSION, "id": 2}, "agent") == []
    assert talk.validate({"jsonrpc": "2.0", "id": 2, "result": {"messageId": "u"}}, "agent") == []
    answered_twice = talk.validate(
        {"jsonrpc": "2.0", "id": 2, "result": {"messageId": "u"}}, "agent"
    )
    assert answered_twice
    assert "answers no request" in answered_twice[0]
    assert (
        talk.validate(
            {"jsonrpc": "2.0", "id": 2, "result": {"outcome": {"outcome": "cancelled"}}}, "client"
        )
        == []
    )


def write_log(path: Path, records: list[tuple[str, Any]]) -> Path:
    with path.open("w") as handle:
        for seq, (direction, message) in enumerate(records):
            line = message if isinstance(message, str) else json.dumps(message)
            handle.write(json.dumps({"seq": seq, "t": 0.0, "dir": direction, "line": line}) + "\n")
    return path


def test_validate_log_reports_problems_per_draft_with_their_position(tmp_path: Path) -> None:
    log = write_log(
        tmp_path / "wire.jsonl",
        [
            ("client->agent", PROMPT),
            ("agent->client", {"jsonrpc": "2.0", "id": 2, "result": {}}),
            ("agent->client", "{not json"),
        ],
    )

    problems = validate_log(log)

    assert [p.split(" ", 2)[:2] for p in problems] == [
        ["[aug]", "#2"],
        ["[nov]", "#1"],
        ["[nov]", "#2"],
    ]
    assert "not JSON" in problems[0]


def test_a_large_log_is_validated_by_sampling_session_updates(tmp_path: Path) -> None:
    records: list[tuple[str, Any]] = [("client->agent", INITIALIZE)]
    for i in range(20_000):
        chunk = update(
            {
                "sessionUpdate": "agent_message_chunk",
                "messageId": "m",
                "content": {"type": "text", "text": f"{i},"},
            }
        )
        records.append(("agent->client", chunk))
    records.append(
        (
            "agent->client",
            {
                "jsonrpc": "2.0",
                "id": 0,
                "result": {"protocolVersion": 2, "info": {"name": "a", "version": "1"}},
            },
        )
    )
    log = write_log(tmp_path / "wire.jsonl", records)

    result = check_log(log)

    assert result.problems == []
    assert result.sampled
    assert result.frames == 20_002
    assert 200 <= result.validated <= 300


def test_small_logs_are_validated_in_full(tmp_path: Path) -> None:
    log = write_log(tmp_path / "wire.jsonl", [("agent->client", CHUNK)] * 10)

    result = check_log(log)

    assert not result.sampled
    assert result.validated == 10


def test_each_draft_knows_its_methods() -> None:
    aug, nov = draft_schema("aug"), draft_schema("nov")

    assert set(nov.methods) - set(aug.methods) == {"tool_call/cancel", "terminal/cancel"}
    assert aug.methods["session/update"].result is None
    assert nov.methods["session/prompt"].result == "PromptResponse"
    assert nov.methods["$/cancel_request"].receiver == "protocol"

"""Reading agent lines strictly: UTF-8, JSON without NaN, JSON-RPC envelopes, typed ids."""

from __future__ import annotations

import pytest

from acp2.check.frames import (
    Frame,
    envelope_problem,
    is_answer,
    is_notification,
    is_request,
    is_response,
    parse_line,
    same_id,
    session_update,
)


def test_a_valid_line_parses_and_a_trailing_carriage_return_is_tolerated() -> None:
    assert parse_line(b'{"jsonrpc":"2.0","id":1,"result":{}}\r') == (
        {"jsonrpc": "2.0", "id": 1, "result": {}},
        None,
    )


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        (b"INFO starting up", "not JSON"),
        (b"", "not JSON"),
        (b'{"x": NaN}', "not JSON"),
        (b'{"x":"\xff"}', "not UTF-8"),
    ],
)
def test_garbage_lines_are_reported_with_the_reason(raw: bytes, problem: str) -> None:
    value, why = parse_line(raw)
    assert value is None
    assert why is not None
    assert why.startswith(problem)


def test_ids_are_the_same_only_with_the_same_json_type() -> None:
    assert same_id(1, 1)
    assert same_id("1", "1")
    assert not same_id(1, "1")
    assert not same_id(True, 1)
    assert not same_id(1, True)


@pytest.mark.parametrize(
    "message",
    [
        {"jsonrpc": "2.0", "id": 1, "method": "x"},
        {"jsonrpc": "2.0", "method": "x"},
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "m"}},
        [{"jsonrpc": "2.0", "id": "a", "result": {}}],
    ],
)
def test_json_rpc_messages_have_no_envelope_problem(message: object) -> None:
    assert envelope_problem(message) is None


@pytest.mark.parametrize(
    ("message", "problem"),
    [
        ({"id": 1, "result": {}}, "jsonrpc"),
        ({"jsonrpc": "2.0", "id": 1, "result": {}, "error": {}}, "exactly one"),
        ({"jsonrpc": "2.0", "id": 1}, "exactly one"),
        ({"jsonrpc": "2.0", "id": 1.5, "result": {}}, "id"),
        ({"jsonrpc": "2.0", "method": 3}, "method"),
        ({"jsonrpc": "2.0"}, "neither"),
        ([], "empty array"),
        (42, "not an object"),
    ],
)
def test_broken_envelopes_are_named(message: object, problem: str) -> None:
    found = envelope_problem(message)
    assert found is not None
    assert problem in found


def test_message_kinds_are_told_apart() -> None:
    request = {"jsonrpc": "2.0", "id": 1, "method": "m"}
    note = {"jsonrpc": "2.0", "method": "session/update", "params": {"update": {"a": 1}}}
    response = {"jsonrpc": "2.0", "id": 1, "result": None}
    assert is_request(request)
    assert not is_notification(request)
    assert is_notification(note)
    assert session_update(note) == {"a": 1}
    assert is_response(response)
    assert not is_response(request)
    assert session_update(request) is None


def test_evidence_is_one_truncated_line_with_time_and_step() -> None:
    frame = Frame(0, 1.25, b"x" * 500 + b"\r", "turn 1")
    text = frame.evidence(40)
    assert text.startswith("+1.250s [turn 1] <- xxx")
    assert text.endswith("... (502 chars)")
    assert "\r" not in text


def test_only_responses_and_arrays_count_as_answers_never_notifications_or_requests() -> None:
    assert is_answer({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "x"}})
    assert is_answer({"jsonrpc": "2.0", "id": 3, "result": {}})
    assert is_answer({"jsonrpc": "2.0", "error": {"code": -32600, "message": "no id"}})
    assert is_answer([{"jsonrpc": "2.0", "id": 1, "result": {}}])
    assert not is_answer({"jsonrpc": "2.0", "method": "_auth/status_update", "params": {}})
    assert not is_answer({"jsonrpc": "2.0", "id": 9, "method": "session/request_permission"})

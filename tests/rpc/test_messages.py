"""Envelope parsing and encoding (TR-01, TR-02, TR-09, TR-10, TR-12, TR-13, TR-14, D-02)."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest

from acp2.errors import InvalidParams, RequestError
from acp2.rpc.framing import Oversized
from acp2.rpc.messages import (
    CANCEL_METHOD,
    NOTIFICATION_HEAD,
    SESSION_UPDATE_PREFIX,
    Batch,
    ErrorResponse,
    Invalid,
    Notification,
    Request,
    Response,
    encode_error,
    encode_notification,
    encode_request,
    encode_result,
    notification_prefix,
    parse_frame,
)
from acp2.rpc.sniff import classify_oversized
from acp2.schema.codec import encode
from acp2.schema.methods import SESSION_UPDATE


def frame(**fields: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", **fields}).encode()


@pytest.mark.parametrize("rid", [0, 1, -5, 2**63 - 1, -(2**63), "1", "", "abc"])
def test_tr09_request_ids_keep_their_value_and_json_type(rid: Any) -> None:
    msg = parse_frame(frame(id=rid, method="m", params={"a": 1}))
    assert isinstance(msg, Request)
    assert msg.id == rid
    assert type(msg.id) is type(rid)
    assert bytes(msg.params or b"") == b'{"a": 1}'


@pytest.mark.parametrize("rid", [None, True, False, 1.5, 1.0, [1], {"a": 1}, 2**63, -(2**63) - 1])
def test_d02_tr10_null_bool_float_structured_and_out_of_int64_ids_are_invalid_with_null_id(
    rid: Any,
) -> None:
    msg = parse_frame(frame(id=rid, method="m"))
    assert isinstance(msg, Invalid)
    assert (msg.code, msg.reply_id, msg.reply) == (-32600, None, True)


def test_tr08_a_message_without_id_is_a_notification() -> None:
    assert parse_frame(frame(method="n")) == Notification("n", None)
    assert parse_frame(frame(method="n", params=None)) == Notification("n", None)


@pytest.mark.parametrize(
    ("line", "code", "reply_id", "response_to"),
    [
        (frame(id=1, result=1, error={"code": 1, "message": "x"}), -32600, None, 1),
        (frame(id=1), -32600, None, 1),
        (json.dumps({"jsonrpc": "1.0", "id": 3, "method": "m"}).encode(), -32600, 3, None),
        (json.dumps({"id": 3, "method": "m"}).encode(), -32600, 3, None),
        (json.dumps({"jsonrpc": 2.0, "id": 3, "method": "m"}).encode(), -32600, 3, None),
        (json.dumps({"jsonrpc": "1.0", "id": 4, "result": 1}).encode(), -32600, None, 4),
        (frame(id=5, method=7), -32600, 5, None),
        (frame(id=6, method="m", result=1), -32600, 6, None),
        (frame(id=7, error={"code": "x", "message": "y"}), -32600, None, 7),
        (frame(id=True, result=1), -32600, None, None),
        (b'{"jsonrpc":"2.0","id":1,"method":"m","params":"\xff"}', -32700, None, None),
        (b"\xff\xfe", -32700, None, None),
        (b"{bad json", -32700, None, None),
        (b'{"a":1} trailing', -32700, None, None),
        (b"5", -32600, None, None),
        (b'"x"', -32600, None, None),
        (b"null", -32600, None, None),
        (b"[]", -32600, None, None),
    ],
)
def test_tr01_tr13_invalid_frames_are_classified_not_dispatched(
    line: bytes, code: int, reply_id: Any, response_to: Any
) -> None:
    msg = parse_frame(line)
    assert isinstance(msg, Invalid)
    assert (msg.code, msg.reply_id, msg.response_to, msg.reply) == (
        code,
        reply_id,
        response_to,
        True,
    )
    assert "\n" not in msg.message


def test_responses_and_error_responses_are_parsed() -> None:
    ok = parse_frame(frame(id=3, result=None))
    assert isinstance(ok, Response)
    assert ok.id == 3
    assert bytes(ok.result) == b"null"
    err = parse_frame(frame(id="x", error={"code": -31999, "message": "odd", "data": [1]}))
    assert err == ErrorResponse("x", -31999, "odd", msgspec.Raw(b"[1]"))
    anon = parse_frame(frame(id=None, error={"code": -32700, "message": "bad"}))
    assert anon == ErrorResponse(None, -32700, "bad", None)


def test_tr14_batches_parse_entry_by_entry() -> None:
    line = json.dumps(
        [{"jsonrpc": "2.0", "id": 1, "method": "a"}, {"jsonrpc": "2.0", "method": "n"}, 5, []]
    ).encode()
    msg = parse_frame(line)
    assert isinstance(msg, Batch)
    kinds = [type(e) for e in msg.entries]
    assert kinds == [Request, Notification, Invalid, Invalid]
    assert all(e.reply_id is None for e in msg.entries if isinstance(e, Invalid))


def test_tr02_encoded_frames_are_compact_single_lines() -> None:
    text = 'a\nb\u2028c\r"d"'
    line = encode_request(1, "m", {"text": text, "n": [1, 2]})
    assert b"\n" not in line
    assert b" " not in line.replace(b"\xe2\x80\xa8", b"")
    params = {"text": text, "n": [1, 2]}
    assert json.loads(line) == {"jsonrpc": "2.0", "id": 1, "method": "m", "params": params}


def test_encoders_build_exact_envelopes() -> None:
    class Params(msgspec.Struct):
        x: int

    assert encode_request(0, "m", None) == b'{"jsonrpc":"2.0","id":0,"method":"m"}'
    assert encode_request("s", "m", Params(1)) == (
        b'{"jsonrpc":"2.0","id":"s","method":"m","params":{"x":1}}'
    )
    assert encode_notification("n", msgspec.Raw(b'{"a" : 1}')) == (
        b'{"jsonrpc":"2.0","method":"n","params":{"a" : 1}}'
    )
    assert encode_result(1, None) == b'{"jsonrpc":"2.0","id":1,"result":null}'
    assert encode_error(None, InvalidParams("bad")) == (
        b'{"jsonrpc":"2.0","id":null,"error":{"code":-32602,"message":"bad"}}'
    )
    assert encode_error("1", RequestError("x", {"k": None}, code=-31999)) == (
        b'{"jsonrpc":"2.0","id":"1","error":{"code":-31999,"message":"x","data":{"k":null}}}'
    )


def oversized(line: bytes) -> Oversized:
    return Oversized(len(line), line[:4096], line[-512:])


BIG = "p" * 10_000


@pytest.mark.parametrize(
    ("value", "reply", "reply_id", "response_to"),
    [
        ({"jsonrpc": "2.0", "id": 9, "method": "m", "params": {"s": BIG}}, True, 9, None),
        ({"jsonrpc": "2.0", "method": "m", "params": {"s": BIG}, "id": "z"}, True, "z", None),
        ({"params": {"s": BIG, "id": 3}, "method": "m", "id": 4, "jsonrpc": "2.0"}, True, 4, None),
        ({"jsonrpc": "2.0", "method": "m", "params": {"s": BIG, "id": 5}}, False, None, None),
        ({"jsonrpc": "2.0", "id": 6, "result": {"s": BIG}}, True, None, 6),
        ({"jsonrpc": "2.0", "result": {"s": BIG}, "id": 7}, True, None, 7),
        ({"jsonrpc": "2.0", "id": None, "method": "m", "params": [BIG]}, True, None, None),
        ([{"jsonrpc": "2.0", "id": 8, "method": "m"}, BIG], True, None, None),
    ],
)
def test_oversized_frames_are_classified_from_head_and_tail(
    value: Any, reply: bool, reply_id: Any, response_to: Any
) -> None:
    msg = classify_oversized(oversized(json.dumps(value).encode()), 1000)
    assert (msg.code, msg.reply, msg.reply_id, msg.response_to) == (
        -32600,
        reply,
        reply_id,
        response_to,
    )
    assert "exceeds the 1000-byte limit" in msg.message


def _deep(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


@pytest.mark.parametrize("depth", [1_000, 10_000, 100_000])
def test_deeply_nested_frames_are_classified_from_their_ends_never_raised(depth: int) -> None:
    deep = _deep(depth)
    message = "Invalid request: JSON nested too deeply"
    call = parse_frame(b'{"jsonrpc":"2.0","id":5,"method":"m","params":%s}' % deep)
    assert call == Invalid(-32600, message, 5)
    note = parse_frame(b'{"jsonrpc":"2.0","method":"m","params":{"x":%s}}' % deep)
    assert note == Invalid(-32600, message, reply=False)
    response = parse_frame(b'{"jsonrpc":"2.0","id":3,"result":%s}' % deep)
    assert response == Invalid(-32600, message, None, True, 3)
    assert parse_frame(deep) == Invalid(-32600, message)
    id_last = parse_frame(b'{"jsonrpc":"2.0","method":"m","params":%s,"id":"z"}' % deep)
    assert id_last == Invalid(-32600, message, "z")


def test_an_integer_id_outside_int64_is_refused_with_a_clear_message() -> None:
    msg = parse_frame(frame(id=2**70, method="m"))
    assert msg == Invalid(-32600, "Invalid request: integer id outside the signed 64-bit range")


def test_a_lone_surrogate_is_a_parse_error_that_says_so_not_truncated_input() -> None:
    msg = parse_frame(b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":"x\\ud800"}}')
    assert msg == Invalid(-32700, "Parse error: invalid JSON: lone surrogate \\ud800 in a string")
    truncated = parse_frame(b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":"\\\\ud800')
    assert truncated == Invalid(-32700, "Parse error: Input data was truncated")
    pair = parse_frame(b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":"\\ud83d\\ude00"}}')
    assert isinstance(pair, Request)


# --- envelope prefixes ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("prefix", "method"),
    [
        (NOTIFICATION_HEAD + b'x/y","params":', "x/y"),
        (notification_prefix("tick"), "tick"),
        (SESSION_UPDATE_PREFIX, SESSION_UPDATE.name),
        (notification_prefix(CANCEL_METHOD), CANCEL_METHOD),
    ],
    ids=["head", "any-method", "session-update", "cancel-request"],
)
def test_each_envelope_prefix_is_what_the_encoder_writes_before_the_params(
    prefix: bytes, method: str
) -> None:
    params = {"sessionId": "s", "update": {"n": 1}}
    frame = encode_notification(method, params)
    assert frame.startswith(prefix)
    assert frame[len(prefix) :] == encode(params) + b"}"


def test_the_session_update_prefix_and_route_prefix_agree() -> None:
    from acp2.rpc.routes import Route

    route = Route(SESSION_UPDATE.name, dict, lambda params: None, False)
    assert route.prefix == SESSION_UPDATE_PREFIX

"""The envelope read once (acp2.rpc.envelope) and the update frames' layout (sans-IO)."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest

from acp2.agent.children import announcement
from acp2.errors import InvalidRequest
from acp2.rpc.envelope import (
    Envelope,
    carries_id,
    keys_of,
    of,
    read,
    result_session,
    session_field,
)
from acp2.rpc.messages import Batch, Invalid, Request, encode_notification, parse_frame
from acp2.rpc.update_frames import (
    announced_child,
    fast_session,
    run_head,
    session_head,
    update_frame,
    update_of,
)
from acp2.schema.methods import METHODS

DEEP = "[" * 5_000 + "]" * 5_000


def frame(message: Any) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode()


def test_a_request_names_its_method_id_and_session() -> None:
    raw = frame(
        {"jsonrpc": "2.0", "id": 7, "method": "session/prompt", "params": {"sessionId": "s1"}}
    )
    env = read(raw)
    assert (env.kind, env.method, env.id, env.session_id) == ("request", "session/prompt", 7, "s1")
    assert env.raw is raw
    assert env.is_call
    assert env.answer_id == 7


def test_a_notification_has_no_id() -> None:
    params = {"sessionId": "s2", "update": {"sessionUpdate": "plan"}}
    env = read(frame({"jsonrpc": "2.0", "method": "session/update", "params": params}))
    assert (env.kind, env.method, env.id, env.session_id) == (
        "notification",
        "session/update",
        None,
        "s2",
    )
    assert env.answer_id is None


def test_responses_and_errors_name_the_id_they_answer() -> None:
    ok = read(b'{"jsonrpc":"2.0","id":"a","result":{"sessionId":"s3"}}')
    assert (ok.kind, ok.method, ok.id, ok.session_id) == ("response", None, "a", None)
    assert result_session(ok) == "s3"
    err = read(b'{"jsonrpc":"2.0","id":4,"error":{"code":-32601,"message":"no"}}')
    assert (err.kind, err.id, err.answer_id) == ("error", 4, None)
    assert result_session(err) is None
    assert result_session(read(b'{"jsonrpc":"2.0","id":5,"result":null}')) is None


def test_ids_keep_their_type() -> None:
    assert read(b'{"jsonrpc":"2.0","id":1,"result":1}').id == 1
    assert read(b'{"jsonrpc":"2.0","id":"1","result":1}').id == "1"
    assert read(b'{"jsonrpc":"2.0","id":"\\u0031","result":1}').id == "1"


def test_a_batch_is_one_envelope() -> None:
    env = read(b'[{"jsonrpc":"2.0","method":"m"},{"jsonrpc":"2.0","id":1,"method":"n"}]')
    assert (env.kind, env.method, env.id, env.session_id) == ("batch", None, None, None)
    assert isinstance(env.message, Batch)
    assert len(env.message.entries) == 2


@pytest.mark.parametrize(
    "raw",
    [b"not json", b"[]", b"42", b'{"jsonrpc":"1.0","method":"m"}', b'{"id":1}', b"\xff\xfe"],
)
def test_what_is_not_a_message_is_invalid_and_never_raises(raw: bytes) -> None:
    env = read(raw)
    assert env.kind == "invalid"
    assert env.method is None
    assert env.session_id is None
    assert isinstance(env.message, Invalid)


def test_an_invalid_call_keeps_the_id_its_error_echoes() -> None:
    env = read(b'{"id":3,"method":"session/prompt","params":{"sessionId":"s"}}')  # no jsonrpc
    assert (env.kind, env.id, env.answer_id) == ("invalid", 3, 3)
    bad_answer = read(b'{"jsonrpc":"2.0","id":9,"result":1,"error":{"code":1}}')
    assert (bad_answer.kind, bad_answer.id, bad_answer.answer_id) == ("invalid", 9, None)


def test_hostile_nesting_is_one_invalid_frame() -> None:
    top = read(DEEP.encode())
    assert top.kind == "invalid"
    ask = read(('{"jsonrpc":"2.0","id":"x","method":"m","params":' + DEEP + "}").encode())
    assert (ask.kind, ask.answer_id) == ("invalid", "x")
    # Nesting inside params is the handler's to judge: the envelope reads, the session
    # id does not (and does not raise).
    deep_params = '{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":'
    env = read((deep_params + DEEP + "}}").encode())
    assert env.kind in ("request", "invalid")
    assert env.session_id is None
    deep_result = read(('{"jsonrpc":"2.0","id":1,"result":{"sessionId":' + DEEP + "}}").encode())
    assert result_session(deep_result) is None


def test_the_session_id_is_read_where_the_table_says() -> None:
    # initialize's params carry no session: a sessionId there is not one.
    init = read(b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"sessionId":"s"}}')
    assert init.session_id is None
    # A method outside the v2 table (v1, extensions) is read under sessionId.
    load = b'{"jsonrpc":"2.0","id":1,"method":"session/load","params":{"sessionId":"s"}}'
    assert read(load).session_id == "s"
    assert read(b'{"jsonrpc":"2.0","method":"x","params":{"sessionId":5}}').session_id is None
    assert read(b'{"jsonrpc":"2.0","method":"x","params":[1]}').session_id is None


def test_the_session_column_matches_the_params_types() -> None:
    for name, spec in METHODS.items():
        info = msgspec.inspect.type_info(spec.params_type)
        variants = getattr(info, "types", (info,))
        fields = {f.encode_name for v in variants for f in getattr(v, "fields", ())}
        assert (session_field(name) == "sessionId") == ("sessionId" in fields), name


def test_of_builds_the_envelope_from_a_parsed_message() -> None:
    raw = b'{"jsonrpc":"2.0","id":2,"method":"session/cancel","params":{"sessionId":"s"}}'
    message = parse_frame(raw)
    assert isinstance(message, Request)
    env = of(message, raw)
    assert env == read(raw)
    assert env.message is message


def test_an_envelope_is_immutable() -> None:
    env = read(b'{"jsonrpc":"2.0","method":"m"}')
    with pytest.raises(AttributeError):
        env.method = "other"  # type: ignore[misc]
    assert isinstance(env, Envelope)


# -- the update frames' layout -------------------------------------------------------------


def test_update_frames_are_read_alike_in_any_layout() -> None:
    update = b'{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}'
    ours = update_frame("s1", update)
    assert ours.startswith(run_head("s1") + b'agent_message_chunk"')
    assert ours.startswith(session_head("s1"))
    other = encode_notification("session/update", {"update": json.loads(update), "sessionId": "s1"})
    assert update_of(ours) == update_of(other) == ("s1", b"agent_message_chunk")
    assert fast_session(ours) == "s1"
    assert fast_session(other) is None  # not the agent's layout: the caller reads it properly
    assert read(other).session_id == "s1"


def test_what_is_not_an_update_has_no_update_session() -> None:
    assert update_of(b'{"jsonrpc":"2.0","id":1,"result":{}}') is None
    assert update_of(b'{"jsonrpc":"2.0","method":"session/update","params":{"update":{}}}') is None
    hostile = b'{"jsonrpc":"2.0","method":"session/update","params":' + DEEP.encode() + b"}"
    assert update_of(hostile) is None


def test_a_session_id_json_escapes_has_no_fast_prefix() -> None:
    assert session_head('we"ird') == b""
    assert session_head(None) == b""
    escaped = update_frame('we"ird', b'{"sessionUpdate":"plan"}')
    assert fast_session(escaped) is None
    assert update_of(escaped) == ('we"ird', b"plan")


def test_carries_id_tells_requests_and_responses_from_notifications_and_junk() -> None:
    assert carries_id(b'{"jsonrpc":"2.0","id":1,"method":"session/request_permission"}')
    assert carries_id(b'{"jsonrpc":"2.0","result":{},"id":"a"}')
    assert carries_id(b'{"jsonrpc":"2.0","method":"session/update","params":{"id":1},"id":0}')
    assert not carries_id(b'{"jsonrpc":"2.0","method":"session/update","params":{"id":1}}')
    assert not carries_id(b'{"jsonrpc":"2.0","id":null,"error":{}}')
    assert not carries_id(b"[1, 2]")
    assert not carries_id(b"{not json")
    assert not carries_id(DEEP.encode())


def test_a_subagent_update_names_its_child_in_any_layout_and_nothing_else_does() -> None:
    announced = msgspec.json.encode(announcement("c1", "Researcher", None, cancellable=True))
    ours = update_frame("p1", announced)
    other = encode_notification(
        "session/update", {"update": json.loads(announced), "sessionId": "p1"}
    )
    assert announced_child(ours) == announced_child(other) == "c1"
    chunk = update_frame("p1", b'{"sessionUpdate":"agent_message_chunk","content":{}}')
    assert announced_child(chunk) is None
    assert announced_child(b'{"jsonrpc":"2.0","method":"subagent_update"}') is None
    nameless = update_frame("p1", b'{"sessionUpdate":"subagent_update"}')
    assert announced_child(nameless) is None
    hostile = ours[:-2] + b',"x":' + DEEP.encode() + b"}}"
    assert announced_child(hostile) is None


def test_keys_of_reads_a_lines_routing_keys_unjudged_and_refuses_what_is_not_an_object() -> None:
    keys = keys_of(b'{"id":1.5,"method":"initialize","params":{"protocolVersion":1}}')
    assert (keys.method, keys.id, bytes(keys.params)) == (
        "initialize",
        1.5,
        b'{"protocolVersion":1}',
    )
    assert keys.result is msgspec.UNSET  # no "jsonrpc", an id JSON-RPC refuses: left to the peer
    answer = keys_of(b'{"jsonrpc":"2.0","id":"a","result":{"x":[]}}')
    assert (answer.method, answer.id, bytes(answer.result)) == (msgspec.UNSET, "a", b'{"x":[]}')
    for line in (b"[1]", b"{", b"[" * 5000 + b"]" * 5000):
        with pytest.raises(InvalidRequest):
            keys_of(line)

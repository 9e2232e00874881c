"""v1 examples of every method and update kind decode, re-encode unchanged, and validate."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from v1_testdata import METHOD_EXAMPLES, UPDATES, load_v1_schema, v1_errors

from acp2.compat.v1.methods import METHODS
from acp2.compat.v1.schema import (
    SESSION_UPDATE_KINDS,
    AgentMessageChunk,
    InitializeRequest,
    McpServer,
    SessionNotification,
    SessionToolCallUpdate,
    SessionUpdate,
    SetSessionConfigOptionRequest,
    ToolCallUpdate,
)
from acp2.schema.codec import decode, decode_any, encode


def _def_names(method: str) -> tuple[str, str | None]:
    defs = load_v1_schema()["$defs"]
    named = [n for n, d in defs.items() if d.get("x-method") == method]
    params = next(n for n in named if not n.endswith("Response"))
    result = next((n for n in named if n.endswith("Response")), None)
    return params, result


def _roundtrip(value: dict[str, Any], tp: Any) -> Any:
    decoded = decode(encode(value), tp)
    assert decode_any(encode(decoded)) == value
    return decoded


@pytest.mark.parametrize(("method", "params", "result"), METHOD_EXAMPLES, ids=lambda v: str(v))
def test_v1_method_example_round_trips_and_validates_against_the_v1_schema(
    method: str, params: dict[str, Any], result: dict[str, Any] | None
) -> None:
    spec = METHODS[method]
    params_def, result_def = _def_names(method)
    assert v1_errors(params, params_def) == []
    _roundtrip(params, spec.params_type)
    if result is None:
        assert spec.result_type is None
        return
    assert result_def is not None
    assert v1_errors(result, result_def) == []
    _roundtrip(result, spec.result_type)


def test_every_v1_method_has_an_example() -> None:
    assert {m for m, _, _ in METHOD_EXAMPLES} == set(METHODS)


@pytest.mark.parametrize("kind", sorted(UPDATES))
def test_v1_update_kind_round_trips_and_validates(kind: str) -> None:
    notification = {"sessionId": "s1", "update": UPDATES[kind]}
    assert v1_errors(notification, "SessionNotification") == []
    decoded = _roundtrip(notification, SessionNotification)
    assert not isinstance(decoded.update, msgspec.Raw)


def test_the_examples_cover_every_v1_update_kind() -> None:
    assert set(UPDATES) == set(SESSION_UPDATE_KINDS)
    assert len(SESSION_UPDATE_KINDS) == 11


def test_zed_shaped_initialize_decodes() -> None:
    raw = (
        b'{"protocolVersion":1,"clientInfo":{"name":"zed","version":"0"},'
        b'"clientCapabilities":{"fs":{"readTextFile":true,"writeTextFile":true},"terminal":true}}'
    )
    request = decode(raw, InitializeRequest)
    assert request.protocol_version == 1
    assert request.client_info
    assert request.client_info.name == "zed"
    caps = request.client_capabilities
    assert caps
    assert caps.terminal is True
    assert caps.fs
    assert caps.fs.read_text_file is True
    assert decode_any(encode(request)) == decode_any(raw)


def test_unknown_update_kind_is_kept_raw_and_re_encoded_unchanged() -> None:
    raw = b'{"sessionUpdate":"_future","x":[1,{"y":null}]}'
    update = decode(raw, SessionUpdate)
    assert isinstance(update, msgspec.Raw)
    assert encode(update) == raw


def test_unknown_content_block_inside_a_chunk_is_kept_raw() -> None:
    value = {"sessionUpdate": "agent_message_chunk", "content": {"type": "_x", "v": 1}}
    chunk = _roundtrip(value, SessionUpdate)
    assert isinstance(chunk, AgentMessageChunk)
    assert isinstance(chunk.content, msgspec.Raw)


def test_tool_call_update_keeps_omitted_null_and_value_apart() -> None:
    value = {"sessionUpdate": "tool_call_update", "toolCallId": "t", "title": None, "kind": "edit"}
    update = _roundtrip(value, SessionUpdate)
    assert isinstance(update, SessionToolCallUpdate)
    assert update.title is None
    assert update.kind == "edit"
    assert update.status is msgspec.UNSET


def test_permission_tool_call_has_no_session_update_tag() -> None:
    patch = decode(b'{"toolCallId":"t"}', ToolCallUpdate)
    assert encode(patch) == b'{"toolCallId":"t"}'


def test_lenient_fields_that_do_not_validate_decode_as_absent() -> None:
    value = {
        "sessionUpdate": "tool_call",
        "toolCallId": "t",
        "title": "x",
        "locations": [{"path": "/a"}, {"nope": 1}],
        "messageId": 3,
    }
    update = decode(encode(value), SessionUpdate)
    assert [loc.path for loc in update.locations] == ["/a"]
    chunk = decode(
        b'{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"a"},'
        b'"messageId":7}',
        SessionUpdate,
    )
    assert chunk.message_id is msgspec.UNSET


def test_mcp_server_kinds_are_checked_and_an_unknown_kind_is_skipped_in_a_list() -> None:
    with pytest.raises(msgspec.ValidationError):
        decode(b'{"type":"http","name":"a"}', McpServer)
    params = {"cwd": "/w", "mcpServers": [{"type": "ws", "name": "a", "url": "u"}]}
    decoded = decode(encode(params), METHODS["session/new"].params_type)
    assert decoded.mcp_servers == []


def test_boolean_config_value_needs_a_bool() -> None:
    ok = decode(
        b'{"sessionId":"s","configId":"c","type":"boolean","value":true}',
        SetSessionConfigOptionRequest,
    )
    assert ok.value is True
    with pytest.raises(msgspec.ValidationError):
        decode(
            b'{"sessionId":"s","configId":"c","type":"boolean","value":"x"}',
            SetSessionConfigOptionRequest,
        )

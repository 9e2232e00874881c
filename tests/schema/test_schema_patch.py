"""Patch fields keep omitted, null and value apart through decode and encode (EX-09)."""

from __future__ import annotations

from typing import Any

import pytest

from acp2.schema import (
    UNSET,
    AgentMessage,
    SessionInfoUpdate,
    TerminalUpdate,
    TextContent,
    ToolCallUpdate,
    UpdateSessionNotification,
    UsageUpdate,
    UserMessage,
    codec,
)


def _update(update: bytes) -> Any:
    params = b'{"sessionId":"s","update":' + update + b"}"
    return codec.decode(params, UpdateSessionNotification).update


@pytest.mark.parametrize("kind", ["user_message", "agent_message", "agent_thought"])
def test_mu04_message_content_omitted_null_and_empty_stay_distinct(kind: str) -> None:
    head = b'{"sessionUpdate":"' + kind.encode() + b'","messageId":"m"'
    omitted = _update(head + b"}")
    null = _update(head + b',"content":null}')
    empty = _update(head + b',"content":[]}')
    assert omitted.content is UNSET
    assert null.content is None
    assert empty.content == []
    assert codec.encode(omitted) == head + b"}"
    assert codec.encode(null) == head + b',"content":null}'
    assert codec.encode(empty) == head + b',"content":[]}'


def test_ex09_an_empty_object_and_a_null_content_are_different_messages() -> None:
    assert AgentMessage(message_id="m") != AgentMessage(message_id="m", content=None)
    assert codec.encode(UserMessage(message_id="m")) == (
        b'{"sessionUpdate":"user_message","messageId":"m"}'
    )


@pytest.mark.parametrize(
    "field", ["title", "kind", "status", "content", "locations", "rawInput", "rawOutput", "name"]
)
def test_tc03_each_tool_call_patch_field_keeps_omitted_null_and_value_apart(field: str) -> None:
    value = {"content": b"[]", "locations": b"[]", "rawInput": b'{"a":1}', "rawOutput": b"[1]"}
    head = b'{"sessionUpdate":"tool_call_update","toolCallId":"c"'
    key = field.encode()
    for body in (b"", b',"' + key + b'":null', b',"' + key + b'":' + value.get(field, b'"x"')):
        update = _update(head + body + b"}")
        assert isinstance(update, ToolCallUpdate)
        assert codec.encode(update) == head + body + b"}"


def test_tc03_tool_call_null_fields_decode_to_none_and_omitted_to_unset() -> None:
    update = _update(b'{"sessionUpdate":"tool_call_update","toolCallId":"c","status":null}')
    assert update.status is None
    assert update.kind is UNSET
    assert update.raw_input is UNSET


def test_tool_call_raw_input_null_is_a_value_not_an_omission() -> None:
    update = _update(b'{"sessionUpdate":"tool_call_update","toolCallId":"c","rawInput":null}')
    assert update.raw_input is None


def test_tm03_terminal_update_patch_fields_keep_null_apart_from_omitted() -> None:
    update = _update(b'{"sessionUpdate":"terminal_update","terminalId":"t","exitStatus":null}')
    assert isinstance(update, TerminalUpdate)
    assert update.exit_status is None
    assert update.output is UNSET
    assert update.command is UNSET


def test_us04_usage_cost_omitted_means_keep_and_null_means_clear() -> None:
    keep = _update(b'{"sessionUpdate":"usage_update","used":1,"size":2}')
    clear = _update(b'{"sessionUpdate":"usage_update","used":1,"size":2,"cost":null}')
    assert isinstance(keep, UsageUpdate)
    assert keep.cost is UNSET
    assert clear.cost is None


def test_si01_session_info_title_null_clears_and_omitted_keeps() -> None:
    clear = _update(b'{"sessionUpdate":"session_info_update","title":null}')
    keep = _update(b'{"sessionUpdate":"session_info_update"}')
    assert isinstance(clear, SessionInfoUpdate)
    assert clear.title is None
    assert keep.title is UNSET


def test_ex10_meta_null_and_meta_omitted_stay_distinct() -> None:
    omitted = _update(b'{"sessionUpdate":"agent_message","messageId":"m"}')
    null = _update(b'{"sessionUpdate":"agent_message","messageId":"m","_meta":null}')
    assert omitted.meta is UNSET
    assert null.meta is None
    assert codec.encode(null).endswith(b'"_meta":null}')


def test_models_built_in_python_encode_only_the_fields_that_were_set() -> None:
    update = ToolCallUpdate(tool_call_id="c", status="completed", content=None)
    assert codec.encode(update) == (
        b'{"sessionUpdate":"tool_call_update","toolCallId":"c","status":"completed","content":null}'
    )
    assert codec.encode(TextContent(text="hi", meta={"k": 1})) == (
        b'{"type":"text","text":"hi","_meta":{"k":1}}'
    )

"""Open unions keep unknown variants byte for byte; known tags stay strict (EX-06..EX-08, EX-12).

Each open union is fuzzed with a ``_``-prefixed custom variant and a ``future_`` variant,
both on its own and nested where the protocol carries it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import msgspec
import pytest

import acp2.schema as schema
from acp2.schema import Raw, codec, tag_of

Wrap = Callable[[dict[str, Any]], dict[str, Any]]


def _in_update(update: Callable[[dict[str, Any]], dict[str, Any]]) -> tuple[Any, Wrap]:
    return schema.UpdateSessionNotification, lambda v: {"sessionId": "s", "update": update(v)}


def _tool_content(v: dict[str, Any]) -> dict[str, Any]:
    return {"sessionUpdate": "tool_call_update", "toolCallId": "c", "content": [v]}


def _diff(v: dict[str, Any]) -> dict[str, Any]:
    return {
        "sessionUpdate": "tool_call_content_chunk",
        "toolCallId": "c",
        "content": {"type": "diff", "changes": [v]},
    }


def _form(v: dict[str, Any]) -> dict[str, Any]:
    return {
        "mode": "form",
        "message": "m",
        "sessionId": "s",
        "requestedSchema": {"type": "object", "properties": {"f": v}},
    }


# (open union alias, tag field, extra fields an unknown variant carries, container, wrapper)
OPEN_UNIONS: list[tuple[str, str, dict[str, Any], Any, Wrap]] = [
    ("SessionUpdate", "sessionUpdate", {}, *_in_update(lambda v: v)),
    ("ContentBlock", "type", {}, schema.PromptRequest, lambda v: {"sessionId": "s", "prompt": [v]}),
    ("ToolCallContent", "type", {}, *_in_update(_tool_content)),
    ("DiffChange", "operation", {"path": "/p"}, *_in_update(_diff)),
    ("McpServer", "type", {"name": "n"}, schema.NewSessionRequest,
     lambda v: {"cwd": "/w", "mcpServers": [v]}),
    ("AuthMethod", "type", {"methodId": "m", "name": "n"}, schema.InitializeResponse,
     lambda v: {"protocolVersion": 2, "info": {"name": "a", "version": "1"},
                "capabilities": {}, "authMethods": [v]}),
    ("PlanUpdateContent", "type", {"planId": "p"}, *_in_update(
        lambda v: {"sessionUpdate": "plan_update", "plan": v})),
    ("RequestPermissionOutcome", "outcome", {}, schema.RequestPermissionResponse,
     lambda v: {"outcome": v}),
    ("RequestPermissionSubject", "type", {}, schema.RequestPermissionRequest,
     lambda v: {"sessionId": "s", "title": "t", "subject": v,
                "options": [{"optionId": "o", "name": "n", "kind": "allow_once"}]}),
    ("ReplayFrom", "type", {}, schema.ResumeSessionRequest,
     lambda v: {"sessionId": "s", "cwd": "/w", "replayFrom": v}),
    ("SessionConfigOption", "type", {"configId": "c", "name": "n"}, *_in_update(
        lambda v: {"sessionUpdate": "config_option_update", "configOptions": [v]})),
    ("AvailableCommandInput", "type", {}, *_in_update(
        lambda v: {"sessionUpdate": "available_commands_update", "availableCommands": [
            {"type": "command", "name": "c", "description": "d", "input": v}]})),
    ("ElicitationPropertySchema", "type", {}, schema.ElicitationFormMode, _form),
    ("BackgroundWork", "type", {}, *_in_update(
        lambda v: {"sessionUpdate": "state_update", "state": "running", "background": [v]})),
    ("CreateElicitationRequest", "mode", {"message": "m", "sessionId": "s"},
     schema.CreateElicitationRequest, lambda v: v),
    ("CreateElicitationResponse", "action", {}, schema.CreateElicitationResponse,
     lambda v: v),
]  # fmt: skip

CASES = [
    pytest.param(alias, tag_field, extra, container, wrap, tag, id=f"{alias}-{tag}")
    for alias, tag_field, extra, container, wrap in OPEN_UNIONS
    for tag in ("_x", "future_y")
]


def _variant(tag_field: str, tag: str, extra: dict[str, Any]) -> dict[str, Any]:
    return {tag_field: tag, **extra, "payload": {"nested": [1, "two", None, 3.5]}, "_meta": {}}


@pytest.mark.parametrize(("alias", "tag_field", "extra", "container", "wrap", "tag"), CASES)
def test_ex12_unknown_variant_parses_and_reencodes_unchanged(
    alias: str, tag_field: str, extra: dict[str, Any], container: Any, wrap: Wrap, tag: str
) -> None:
    variant = _variant(tag_field, tag, extra)
    alone = codec.decode(json.dumps(variant).encode(), getattr(schema, alias))
    assert isinstance(alone, Raw)
    assert tag_of(alone, tag_field) == tag
    assert json.loads(codec.encode(alone)) == variant

    message = wrap(variant)
    data = codec.encode(message)
    decoded = codec.decode(data, container)
    assert codec.encode(decoded) == data


def test_ex07_a_proxied_unknown_session_update_is_byte_equivalent() -> None:
    data = b'{"sessionId":"s","update":{"sessionUpdate":"_acme/x","z":{"b":1,"a":[true,false]}}}'
    decoded = codec.decode(data, schema.UpdateSessionNotification)
    assert isinstance(decoded.update, Raw)
    assert codec.encode(decoded) == data


def test_ex11_removed_v1_discriminators_are_kept_as_unknown_variants() -> None:
    for kind in (b"plan", b"tool_call", b"current_mode_update"):
        data = b'{"sessionId":"s","update":{"sessionUpdate":"' + kind + b'","x":1}}'
        assert isinstance(codec.decode(data, schema.UpdateSessionNotification).update, Raw)


def test_ex07_unknown_variants_inside_skip_invalid_lists_are_kept_not_skipped() -> None:
    data = (
        b'{"sessionUpdate":"tool_call_update","toolCallId":"c","content":['
        b'{"type":"_widget","w":1},{"type":"content","content":{"type":"text","text":"t"}}]}'
    )
    update = codec.decode(data, schema.SessionUpdate)
    assert isinstance(update, schema.ToolCallUpdate)
    assert isinstance(update.content, list)
    assert isinstance(update.content[0], Raw)
    assert isinstance(update.content[1], schema.Content)


MALFORMED_KNOWN: list[tuple[str, Any, bytes]] = [
    ("tool_call_update without toolCallId", schema.SessionUpdate,
     b'{"sessionUpdate":"tool_call_update"}'),
    ("chunk without messageId", schema.SessionUpdate,
     b'{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"}}'),
    ("state_update without state", schema.SessionUpdate, b'{"sessionUpdate":"state_update"}'),
    ("usage_update with null size", schema.SessionUpdate,
     b'{"sessionUpdate":"usage_update","used":1,"size":null}'),
    ("text block without text", schema.ContentBlock, b'{"type":"text"}'),
    ("resource without text or blob", schema.ContentBlock,
     b'{"type":"resource","resource":{"uri":"file:///a"}}'),
    ("move without oldPath", schema.DiffChange, b'{"operation":"move","path":"/a"}'),
    ("selected outcome without optionId", schema.RequestPermissionOutcome,
     b'{"outcome":"selected"}'),
    ("stdio server without command", schema.McpServer, b'{"type":"stdio","name":"n"}'),
    ("plan items without planId", schema.PlanUpdateContent, b'{"type":"items","entries":[]}'),
    ("terminal auth method without methodId", schema.AuthMethod,
     b'{"type":"terminal","name":"n"}'),
    ("elicitation without a scope", schema.CreateElicitationRequest,
     b'{"mode":"url","message":"m","elicitationId":"e","url":"https://x"}'),
    ("boolean config value that is a string", schema.SetSessionConfigOptionRequest,
     b'{"sessionId":"s","configId":"c","type":"boolean","value":"yes"}'),
    ("select mixing choices and groups", schema.SessionConfigOption,
     b'{"type":"select","configId":"c","name":"n","currentValue":"a","options":['
     b'{"value":"a","name":"A"},{"groupId":"g","name":"G","options":[]}]}'),
    ("string multi-select items without enum", schema.ElicitationPropertySchema,
     b'{"type":"array","items":{"type":"string"}}'),
    ("permission request with no options", schema.RequestPermissionRequest,
     b'{"sessionId":"s","title":"t","options":[]}'),
    ("union value without its tag", schema.ContentBlock, b'{"text":"x"}'),
]  # fmt: skip


@pytest.mark.parametrize(
    ("tp", "data"), [pytest.param(tp, d, id=n) for n, tp, d in MALFORMED_KNOWN]
)
def test_ex08_a_known_tag_with_a_malformed_payload_is_rejected(tp: Any, data: bytes) -> None:
    with pytest.raises(msgspec.ValidationError):
        codec.decode(data, tp)


def test_ex08_the_error_names_the_json_path_of_the_problem() -> None:
    data = b'{"sessionId":"s","update":{"sessionUpdate":"_x","a":1}' + b"}"
    codec.decode(data, schema.UpdateSessionNotification)  # the unknown variant is fine
    bad = b'{"sessionId":"s","update":{"sessionUpdate":"tool_call_update"}}'
    with pytest.raises(msgspec.ValidationError, match=r"toolCallId.*\$\.update"):
        codec.decode(bad, schema.UpdateSessionNotification)


OPEN_ENUMS: list[tuple[str, Any, bytes, Callable[[Any], Any]]] = [
    ("stop reason", schema.SessionUpdate,
     b'{"sessionUpdate":"state_update","state":"idle","stopReason":"%s"}', lambda u: u.stop_reason),
    ("state", schema.SessionUpdate, b'{"sessionUpdate":"state_update","state":"%s"}',
     lambda u: u.state),
    ("tool kind", schema.SessionUpdate,
     b'{"sessionUpdate":"tool_call_update","toolCallId":"c","kind":"%s"}', lambda u: u.kind),
    ("tool status", schema.SessionUpdate,
     b'{"sessionUpdate":"tool_call_update","toolCallId":"c","status":"%s"}', lambda u: u.status),
    ("plan priority", schema.PlanEntry, b'{"content":"c","priority":"%s","status":"pending"}',
     lambda e: e.priority),
    ("plan status", schema.PlanEntry, b'{"content":"c","priority":"low","status":"%s"}',
     lambda e: e.status),
    ("permission option kind", schema.PermissionOption,
     b'{"optionId":"o","name":"n","kind":"%s"}', lambda o: o.kind),
    ("config category", schema.SessionConfigOption,
     b'{"type":"boolean","configId":"c","name":"n","category":"%s","currentValue":true}',
     lambda o: o.category),
    ("diff file type", schema.DiffChange, b'{"operation":"add","path":"/a","fileType":"%s"}',
     lambda c: c.file_type),
    ("diff patch format", schema.DiffPatch, b'{"format":"%s","text":"t"}', lambda p: p.format),
    ("notice severity", schema.SessionUpdate,
     b'{"sessionUpdate":"notice","severity":"%s","title":"t"}', lambda n: n.severity),
    ("compaction status", schema.SessionUpdate,
     b'{"sessionUpdate":"compaction_update","compactionId":"c","status":"%s"}',
     lambda c: c.status),
    ("icon theme", schema.Icon, b'{"src":"https://i","theme":"%s"}', lambda i: i.theme),
    ("audience role", schema.Annotations, b'{"audience":["%s"]}', lambda a: a.audience[0]),
    ("string format", schema.ElicitationPropertySchema, b'{"type":"string","format":"%s"}',
     lambda s: s.format),
    ("config value type", schema.SetSessionConfigOptionRequest,
     b'{"sessionId":"s","configId":"c","type":"%s","value":{"any":[1]}}', lambda r: r.type),
    ("command type", schema.AvailableCommand, b'{"type":"%s","name":"n","description":"d"}',
     lambda c: c.type),
    ("error code", schema.Error, b'{"code":-31999,"message":"%s"}', lambda e: e.message),
]  # fmt: skip


@pytest.mark.parametrize(
    ("tp", "template", "get", "value"),
    [
        pytest.param(tp, t, get, value, id=f"{name}-{value}")
        for name, tp, t, get in OPEN_ENUMS
        for value in ("_x", "future_y")
    ],
)
def test_ex12_open_enum_values_parse_as_strings_and_reencode_unchanged(
    tp: Any, template: bytes, get: Callable[[Any], Any], value: str
) -> None:
    data = template.replace(b"%s", value.encode())
    decoded = codec.decode(data, tp)
    assert get(decoded) == value
    assert codec.encode(decoded) == data

"""Lenient decoding (IN-16), strict integers, and the liberal accept rules of CHECKLIST 4.8."""

from __future__ import annotations

from typing import Annotated, Any, get_args, get_origin

import msgspec
import pytest
from schema_testdata import load_schema

import acp2.schema as schema
from acp2.schema import LENIENT, SKIP_INVALID, UNSET, Raw, codec
from acp2.schema.capabilities import supports

INIT = b'{"protocolVersion":2,"info":{"name":"c","version":"1"},"capabilities":%s}'


def test_in16_a_malformed_prompt_capability_is_treated_as_absent() -> None:
    data = b'{"protocolVersion":2,"info":{"name":"a","version":"1"},"capabilities":' + (
        b'{"session":{"prompt":"yes","delete":{}}}}'
    )
    result = codec.decode(data, schema.InitializeResponse)
    session = result.capabilities.session
    assert isinstance(session, schema.SessionCapabilities)
    assert session.prompt is UNSET
    assert supports(session.delete)
    assert not supports(session.prompt)


def test_in16_a_malformed_client_capabilities_object_defaults_to_empty() -> None:
    request = codec.decode(INIT % b'"all of them"', schema.InitializeRequest)
    assert request.capabilities == schema.ClientCapabilities()


def test_in07_an_empty_capability_object_means_supported_and_null_means_not() -> None:
    request = codec.decode(
        INIT % b'{"elicitation":{"form":{},"url":null}}', schema.InitializeRequest
    )
    elicitation = request.capabilities.elicitation
    assert isinstance(elicitation, schema.ElicitationCapabilities)
    assert supports(elicitation.form)
    assert not supports(elicitation.url)
    assert not supports(request.capabilities.auth)


def test_in16_malformed_meta_is_treated_as_absent() -> None:
    update = codec.decode(
        b'{"sessionUpdate":"agent_message","messageId":"m","_meta":"nope"}', schema.SessionUpdate
    )
    assert update.meta is UNSET


def test_in16_skip_invalid_drops_bad_auth_methods_and_keeps_the_rest() -> None:
    data = (
        b'{"protocolVersion":2,"info":{"name":"a","version":"1"},"authMethods":['
        b'{"type":"agent","methodId":"ok","name":"OK"},'
        b'{"type":"agent","name":"no id"},'
        b'{"type":"_sso","methodId":"sso","name":"SSO"},'
        b"42]}"
    )
    methods = codec.decode(data, schema.InitializeResponse).auth_methods
    assert isinstance(methods, list)
    assert len(methods) == 2
    assert isinstance(methods[0], schema.AuthMethodAgent)
    assert isinstance(methods[1], Raw)


def test_in16_skip_invalid_drops_bad_tool_call_locations() -> None:
    update = codec.decode(
        b'{"sessionUpdate":"tool_call_update","toolCallId":"c",'
        b'"locations":[{"path":"/a","line":2},{"line":3},{"path":"/b"}]}',
        schema.SessionUpdate,
    )
    assert [loc.path for loc in update.locations] == ["/a", "/b"]


@pytest.mark.parametrize(
    ("tp", "data", "field"),
    [
        (schema.Annotations, b'{"priority":2}', "priority"),
        (schema.Annotations, b'{"lastModified":5}', "last_modified"),
        (schema.ToolCallLocation, b'{"path":"/a","line":-1}', "line"),
        (schema.ResourceLink, b'{"name":"n","uri":"u","size":"big"}', "size"),
        (schema.TerminalExitStatus, b'{"exitCode":"1"}', "exit_code"),
        (schema.SessionUpdate, b'{"sessionUpdate":"usage_update","used":1,"size":2,"cost":7}',
         "cost"),
        (schema.SessionUpdate, b'{"sessionUpdate":"state_update","state":"idle","stopReason":3}',
         "stop_reason"),
        (schema.ListSessionsResponse, b'{"sessions":[],"nextCursor":5}', "next_cursor"),
    ],
)  # fmt: skip
def test_in16_lenient_fields_with_bad_values_decode_as_absent(
    tp: Any, data: bytes, field: str
) -> None:
    assert getattr(codec.decode(data, tp), field) is UNSET


def test_in16_a_required_field_is_never_lenient() -> None:
    with pytest.raises(msgspec.ValidationError):
        codec.decode(b'{"sessionUpdate":"tool_call_update","toolCallId":5}', schema.SessionUpdate)


@pytest.mark.parametrize(
    ("tp", "data"),
    [
        (schema.SessionUpdate, b'{"sessionUpdate":"usage_update","used":true,"size":2}'),
        (schema.InitializeRequest, b'{"protocolVersion":true,"info":{"name":"c","version":"1"}}'),
        (schema.TerminalSize, b'{"cols":false,"rows":1}'),
        (schema.Error, b'{"code":true,"message":"m"}'),
        (schema.SessionUpdate, b'{"sessionUpdate":"usage_update","used":-1,"size":2}'),
        (schema.InitializeRequest, b'{"protocolVersion":65536,"info":{"name":"c","version":"1"}}'),
        (schema.TerminalSize, b'{"cols":0,"rows":1}'),
    ],
)
def test_integer_fields_reject_bools_and_out_of_range_values(tp: Any, data: bytes) -> None:
    with pytest.raises(msgspec.ValidationError):
        codec.decode(data, tp)


def test_a_lenient_integer_field_reads_a_bool_as_absent_not_as_one() -> None:
    status = codec.decode(b'{"exitCode":true}', schema.TerminalExitStatus)
    assert status.exit_code is UNSET


# -- liberal accept (CHECKLIST 4.8) ------------------------------------------------------


def test_d09_a_prompt_response_with_or_without_message_id_is_accepted() -> None:
    assert codec.decode(b"{}", schema.PromptResponse).message_id is UNSET
    assert codec.decode(b'{"messageId":"m"}', schema.PromptResponse).message_id == "m"


def test_d28_a_command_without_type_decodes_as_command_and_is_sent_with_it() -> None:
    command = codec.decode(b'{"name":"web","description":"d"}', schema.AvailableCommand)
    assert command.type == "command"
    assert codec.encode(command) == b'{"type":"command","name":"web","description":"d"}'
    assert codec.encode(schema.AvailableCommand(name="a", description="b")).startswith(
        b'{"type":"command"'
    )


@pytest.mark.parametrize("code", [0, 255, -1, -1073741510, 2**40])
def test_d24_exit_codes_accept_any_int64(code: int) -> None:
    status = codec.decode(b'{"exitCode":%d}' % code, schema.TerminalExitStatus)
    assert status.exit_code == code


def test_d27_currency_accepts_any_string() -> None:
    assert codec.decode(b'{"amount":1,"currency":"credits"}', schema.Cost).currency == "credits"


def test_d33_tool_call_location_line_zero_is_accepted() -> None:
    assert codec.decode(b'{"path":"/a","line":0}', schema.ToolCallLocation).line == 0


def test_d33_resource_link_size_accepts_int64_and_uint64() -> None:
    for size in (-1, 2**63 + 5):
        link = codec.decode(b'{"name":"n","uri":"u","size":%d}' % size, schema.ResourceLink)
        assert link.size == size


@pytest.mark.parametrize("request_id", [b"1", b'"1"', b"null", b"-7"])
def test_tr10_request_ids_accept_integers_strings_and_aug_null(request_id: bytes) -> None:
    note = codec.decode(b'{"requestId":' + request_id + b"}", schema.CancelRequestNotification)
    assert codec.encode(note) == b'{"requestId":' + request_id + b"}"


def test_tr09_request_id_keeps_its_json_type() -> None:
    as_int = codec.decode(b'{"requestId":1}', schema.CancelRequestNotification)
    as_str = codec.decode(b'{"requestId":"1"}', schema.CancelRequestNotification)
    assert as_int.request_id == 1
    assert as_str.request_id == "1"


def test_d29_an_empty_select_option_list_is_tolerated() -> None:
    option = codec.decode(
        b'{"type":"select","configId":"c","name":"n","currentValue":"a","options":[]}',
        schema.SessionConfigOption,
    )
    assert isinstance(option, schema.SessionConfigSelect)
    assert option.options == []


def test_d18_nov_null_mcp_lists_read_as_omitted() -> None:
    server = codec.decode(
        b'{"type":"stdio","name":"n","command":"/bin/x","args":null,"env":null}', schema.McpServer
    )
    assert isinstance(server, schema.McpServerStdio)
    assert server.args is UNSET
    assert codec.encode(server) == b'{"type":"stdio","name":"n","command":"/bin/x"}'


def test_d18_nov_null_session_lists_read_as_omitted() -> None:
    request = codec.decode(
        b'{"cwd":"/w","mcpServers":null,"additionalDirectories":null}', schema.NewSessionRequest
    )
    assert request.mcp_servers is UNSET
    assert request.additional_directories is UNSET


def test_inconsistency_12_initialize_capabilities_default_to_empty_and_are_always_sent() -> None:
    request = codec.decode(
        b'{"protocolVersion":2,"info":{"name":"c","version":"1"}}', schema.InitializeRequest
    )
    assert request.capabilities == schema.ClientCapabilities()
    assert codec.encode(request).endswith(b'"capabilities":{}}')


def test_d32_elicitation_schema_type_and_properties_default_and_are_always_sent() -> None:
    form = schema.ElicitationSchema()
    assert codec.encode(form) == b'{"type":"object","properties":{}}'
    assert codec.decode(b"{}", schema.ElicitationSchema) == form


def test_d32_elicitation_accept_content_takes_any_json_values() -> None:
    action = codec.decode(
        b'{"action":"accept","content":{"a":{"deep":[1]},"b":null}}',
        schema.CreateElicitationResponse,
    )
    assert isinstance(action, schema.ElicitationAcceptAction)
    assert action.content == {"a": {"deep": [1]}, "b": None}


def test_ss15_a_malformed_replay_cursor_is_rejected_not_read_as_no_replay() -> None:
    with pytest.raises(msgspec.ValidationError):
        codec.decode(
            b'{"sessionId":"s","cwd":"/w","replayFrom":"start"}', schema.ResumeSessionRequest
        )


def test_pr04_a_tool_call_subject_is_sent_without_a_session_update_tag() -> None:
    subject = schema.ToolCallPermissionSubject(
        tool_call=schema.ToolCallFields(tool_call_id="c", title="Edit")
    )
    assert codec.encode(subject) == (
        b'{"type":"tool_call","toolCall":{"toolCallId":"c","title":"Edit"}}'
    )


def test_pr04_a_tool_call_subject_with_unknown_content_still_decodes() -> None:
    data = b'{"type":"tool_call","toolCall":{"toolCallId":"c","content":[{"type":"_x"}]}}'
    subject = codec.decode(data, schema.RequestPermissionSubject)
    assert isinstance(subject, schema.ToolCallPermissionSubject)
    assert codec.encode(subject) == data


# -- the markers follow the Aug schema ---------------------------------------------------


def _markers(tp: Any) -> set[Any]:
    return set(get_args(tp)[1:]) if get_origin(tp) is Annotated else set()


def _aug_object_defs() -> list[Any]:
    defs = load_schema("aug")["$defs"]
    return [
        pytest.param(name, definition, id=name)
        for name, definition in sorted(defs.items())
        if isinstance(cls := getattr(schema, name, None), type) and issubclass(cls, msgspec.Struct)
    ]


@pytest.mark.parametrize(("name", "definition"), _aug_object_defs())
def test_in16_every_aug_leniency_hint_is_a_marker_on_the_model(
    name: str, definition: dict[str, Any]
) -> None:
    cls = getattr(schema, name)
    fields = {f.encode_name: f for f in msgspec.structs.fields(cls)}
    for key, prop in definition.get("properties", {}).items():
        if key not in fields:
            continue  # the tag field, or a property dropped from the vendored copy
        markers = _markers(fields[key].type)
        lenient = prop.get("x-deserialize-default-on-error", False)
        if key == "replayFrom":
            lenient = False  # deliberately strict: SS-15 / D-17
        assert (LENIENT in markers) == lenient, (name, key)
        skip = prop.get("x-deserialize-skip-invalid-items", False)
        assert (SKIP_INVALID in markers) == skip, (name, key)

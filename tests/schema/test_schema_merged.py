"""Untagged schema unions merged into one struct keep their shape rules (EX-08 closed parts)."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest
from schema_testdata import fixture_data

import acp2.schema as schema
from acp2.schema import UNSET, codec
from acp2.schema._base import convert


def test_embedded_resource_is_text_or_blob_and_never_neither() -> None:
    text = schema.EmbeddedResourceResource(uri="file:///a", text="x")
    blob = codec.decode(b'{"uri":"file:///b","blob":"AA=="}', schema.EmbeddedResourceResource)
    assert text.blob is UNSET
    assert blob.text is UNSET
    with pytest.raises(ValueError, match="text"):
        schema.EmbeddedResourceResource(uri="file:///a")


def test_co03_grouped_select_options_decode_as_groups_of_choices() -> None:
    option = codec.decode(
        b'{"type":"select","configId":"m","name":"Model","currentValue":"a","options":['
        b'{"groupId":"g","name":"G","options":[{"value":"a","name":"A"}]}]}',
        schema.SessionConfigOption,
    )
    assert isinstance(option, schema.SessionConfigSelect)
    group = option.options[0]
    assert group.is_group
    assert group.options != UNSET
    assert [choice.value for choice in group.options or []] == ["a"]


@pytest.mark.parametrize(
    "entry",
    [
        b'{"name":"n"}',
        b'{"name":"n","value":"v","groupId":"g","options":[]}',
        b'{"name":"n","groupId":"g"}',
        b'{"name":"n","groupId":"g","options":[{"name":"i","groupId":"h","options":[]}]}',
    ],
)
def test_co03_a_select_entry_is_exactly_a_choice_or_a_flat_group(entry: bytes) -> None:
    with pytest.raises(msgspec.ValidationError):
        codec.decode(entry, schema.SessionConfigSelectOption)


def test_el02_elicitation_accepts_either_scope_and_aug_allows_both() -> None:
    session = codec.decode(
        b'{"mode":"url","message":"m","sessionId":"s","elicitationId":"e","url":"https://x"}',
        schema.CreateElicitationRequest,
    )
    both = codec.decode(
        b'{"mode":"url","message":"m","sessionId":"s","requestId":1,"elicitationId":"e",'
        b'"url":"https://x"}',
        schema.CreateElicitationRequest,
    )
    assert isinstance(session, schema.ElicitationUrlMode)
    assert session.request_id is UNSET
    assert isinstance(both, schema.ElicitationUrlMode)
    assert both.request_id == 1


def test_el04_titled_and_string_multi_select_items_both_decode() -> None:
    titled = codec.decode(b'{"anyOf":[{"const":"a","title":"A"}]}', schema.MultiSelectItems)
    plain = codec.decode(b'{"type":"string","enum":["a"]}', schema.MultiSelectItems)
    assert titled.type is UNSET
    assert plain.enum == ["a"]
    with pytest.raises(msgspec.ValidationError):
        codec.decode(b"{}", schema.MultiSelectItems)


def test_co06_set_config_option_checks_the_value_against_its_type() -> None:
    with pytest.raises(ValueError, match="string"):
        schema.SetSessionConfigOptionRequest(session_id="s", config_id="c", type="id", value=1)
    with pytest.raises(ValueError, match="boolean"):
        schema.SetSessionConfigOptionRequest(session_id="s", config_id="c", type="boolean", value=1)


def _all_fixture_payloads() -> list[Any]:
    updates = fixture_data("session_updates.json")["updates"]
    messages = fixture_data("messages.json")["messages"]
    cases = [
        pytest.param(
            {"sessionId": "s", "update": e["update"]},
            schema.UpdateSessionNotification,
            id=e["name"],
        )
        for e in updates
    ]
    cases += [pytest.param(e["value"], getattr(schema, e["type"]), id=e["name"]) for e in messages]
    return cases


@pytest.mark.parametrize(("value", "tp"), _all_fixture_payloads())
def test_the_lenient_walker_and_the_fast_decoder_agree_on_valid_input(value: Any, tp: Any) -> None:
    assert convert(value, tp) == codec.decode(json.dumps(value).encode(), tp)

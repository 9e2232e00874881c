"""Fixtures round-trip unchanged and validate against the drafts they claim (TR-18).

Every fixture is decoded into its model, encoded, and decoded again: both decodes are
equal, and the encoded JSON is value-equal to the input. The encoded JSON is then
validated with jsonschema (Draft 2020-12) against each vendored schema: valid under the
drafts the fixture lists, invalid under the others.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from schema_testdata import DRAFTS, fixture_data, has_def, is_valid

import acp2.schema as schema
from acp2.schema import Raw, SessionUpdate, UpdateSessionNotification, codec
from acp2.schema.methods import METHODS

SEED = fixture_data("seed_prompt_lifecycle.json")["examples"]
UPDATES = fixture_data("session_updates.json")["updates"]
MESSAGES = fixture_data("messages.json")["messages"]


def _roundtrip(value: Any, tp: Any) -> Any:
    """Decode ``value`` as ``tp``, check decode(encode(x)) == x, return the encoded JSON."""
    raw = json.dumps(value).encode()
    decoded = codec.decode(raw, tp)
    encoded = codec.encode(decoded)
    assert codec.decode(encoded, tp) == decoded
    out = json.loads(encoded)
    assert out == value
    return out


def _check_drafts(def_name: str, value: Any, valid: list[str]) -> None:
    for draft in DRAFTS:
        if not has_def(draft, def_name):
            assert draft not in valid, f"{def_name} is not defined by {draft}"
            continue
        assert is_valid(draft, def_name, value) is (draft in valid), (draft, def_name)


def _seed_payload(example: dict[str, Any]) -> tuple[Any, Any, str]:
    spec = METHODS[example["method"]]
    message = example["message"]
    if "result" in message:
        return message["result"], spec.result_type, spec.result_type.__name__
    return message["params"], spec.params_type, spec.params_type.__name__


@pytest.mark.parametrize("example", SEED, ids=[e["name"] for e in SEED])
def test_tr18_every_seed_page_example_round_trips_and_validates(example: dict[str, Any]) -> None:
    payload, tp, def_name = _seed_payload(example)
    encoded = _roundtrip(payload, tp)
    _check_drafts(def_name, encoded, example["valid"])


def test_the_seed_fixture_holds_all_fifteen_examples_of_the_page() -> None:
    assert len(SEED) == 15
    assert {e["message"]["jsonrpc"] for e in SEED} == {"2.0"}


@pytest.mark.parametrize("entry", UPDATES, ids=[e["name"] for e in UPDATES])
def test_tr18_every_session_update_kind_round_trips_and_validates(entry: dict[str, Any]) -> None:
    params = {"sessionId": "sess_1", "update": entry["update"]}
    encoded = _roundtrip(params, UpdateSessionNotification)
    decoded = codec.decode(json.dumps(params).encode(), UpdateSessionNotification)
    assert not isinstance(decoded.update, Raw), "a known kind must decode to its class"
    _check_drafts("SessionUpdate", encoded["update"], entry["valid"])
    _check_drafts("UpdateSessionNotification", encoded, entry["valid"])


def test_the_update_fixtures_cover_every_session_update_kind_of_both_drafts() -> None:
    kinds = {e["update"]["sessionUpdate"] for e in UPDATES}
    assert kinds == set(schema.SESSION_UPDATE_KINDS)
    # 16 Aug, 3 more Nov; replay_complete, subagent_update, session_message(_chunk) (Preview)
    assert len(kinds) == 23


@pytest.mark.parametrize("entry", MESSAGES, ids=[e["name"] for e in MESSAGES])
def test_tr18_every_method_payload_round_trips_and_validates(entry: dict[str, Any]) -> None:
    tp = getattr(schema, entry["type"])
    encoded = _roundtrip(entry["value"], tp)
    assert not isinstance(codec.decode(json.dumps(entry["value"]).encode(), tp), Raw)
    _check_drafts(entry.get("def", entry["type"]), encoded, entry["valid"])


def test_the_message_fixtures_cover_the_params_and_result_of_every_method() -> None:
    types = {getattr(schema, e["type"]) for e in MESSAGES}
    for spec in METHODS.values():
        assert spec.params_type in types, spec.name
        # mcp/message's result is the inner MCP result, passed on unread (msgspec.Raw).
        if spec.result_type is not None and spec.result_type is not Raw:
            assert spec.result_type in types, spec.name


def test_a_session_update_union_value_decodes_on_its_own() -> None:
    update = codec.decode(b'{"sessionUpdate":"state_update","state":"idle"}', SessionUpdate)
    assert isinstance(update, schema.StateUpdate)
    assert update.state == "idle"

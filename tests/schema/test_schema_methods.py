"""The method table matches the vendored method list and the schemas' x-method / x-side."""

from __future__ import annotations

import json

import pytest
from schema_testdata import DATA, DRAFTS, load_schema

import acp2.schema as schema
from acp2.schema import methods
from acp2.schema.methods import METHODS, MethodSpec

_SENDER_OF_HANDLER_SIDE = {"agent": "client", "client": "agent", "protocol": "either"}


def test_the_table_has_every_aug_method_plus_nov_cancels_plus_the_unstable_preview_ones() -> None:
    meta = json.loads((DATA / "schema" / "acp-v2-meta.json").read_text())
    aug = {
        name
        for group in ("agentMethods", "clientMethods", "protocolMethods")
        for name in meta[group].values()
    }
    assert {
        "session/fork",
        "session/archive",
        "session/unarchive",
        "session/set_title",
        "auth/status",
        "auth/status_update",
        "mcp/connect",
        "mcp/message",
        "mcp/disconnect",
        "providers/list",
        "providers/set",
        "providers/disable",
    } == methods.UNSTABLE
    assert not methods.UNSTABLE & aug
    assert set(METHODS) == aug | {"tool_call/cancel", "terminal/cancel"} | methods.UNSTABLE
    assert {n for n, spec in METHODS.items() if spec.nov_only} == {
        "tool_call/cancel",
        "terminal/cancel",
    }


@pytest.mark.parametrize("draft", DRAFTS)
def test_params_and_results_match_the_x_method_annotations_of_each_schema(draft: str) -> None:
    seen = set()
    for name, definition in load_schema(draft)["$defs"].items():
        method = definition.get("x-method")
        if method is None:
            continue
        spec = METHODS[method]
        seen.add(method)
        assert spec.sender == _SENDER_OF_HANDLER_SIDE[definition["x-side"]], name
        if name.endswith("Response"):
            assert spec.result_type is getattr(schema, name), name
        else:
            assert spec.params_type is getattr(schema, name), name
    expected = {n for n, spec in METHODS.items() if draft == "nov" or not spec.nov_only}
    assert seen == expected - methods.UNSTABLE


def test_notifications_have_no_result_type_and_requests_have_one() -> None:
    notifications = {n for n, spec in METHODS.items() if spec.kind == "notification"}
    assert notifications == {
        "session/cancel",
        "session/update",
        "elicitation/complete",
        "$/cancel_request",
        "auth/status_update",
    }
    assert all(spec.result_type is not None for spec in METHODS.values() if spec.kind == "request")


def test_each_wire_name_has_a_constant_and_specs_are_frozen() -> None:
    constants = {
        getattr(methods, name)
        for name in methods.__all__
        if name.isupper()
        and name not in ("METHODS", "UNSTABLE", "SESSION_PARAM", "MCP_NOTIFICATIONS")
    }
    assert {spec.name for spec in constants} == set(METHODS)
    # mcp/message is a request and a notification: the notification has its own table.
    notification = methods.MCP_MESSAGE_NOTIFICATION
    assert {notification.name: notification} == methods.MCP_NOTIFICATIONS
    assert all(METHODS[spec.name] is spec for spec in constants - {notification})
    assert METHODS["session/prompt"].params_type is schema.PromptRequest
    spec = methods.INITIALIZE
    assert isinstance(spec, MethodSpec)
    with pytest.raises(AttributeError):
        spec.name = "x"  # type: ignore[misc]


def test_retry_classes_mark_reads_safe_and_the_prompt_keyed_by_its_idempotency_key() -> None:
    assert methods.SESSION_PROMPT.retry == "keyed"
    safe = {s.name for s in METHODS.values() if s.retry == "safe"}
    assert safe == {"initialize", "session/list", "auth/status", "providers/list"}
    assert methods.SESSION_NEW.retry == "never"

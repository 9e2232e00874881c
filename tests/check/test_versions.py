"""Which version an ``initialize`` answer speaks, and a version-1 request valid under both."""

from __future__ import annotations

import pytest

from acp2.check.validator import SchemaValidator
from acp2.check.versions import initialize_params, is_v1_result

V1_RESULT = {
    "protocolVersion": 1,
    "agentInfo": {"name": "a", "version": "1"},
    "agentCapabilities": {"loadSession": True},
}


@pytest.mark.parametrize(
    ("result", "v1"),
    [
        (V1_RESULT, True),
        ({"protocolVersion": 1}, True),  # v1 lets a result be the version alone
        ({**V1_RESULT, "protocolVersion": 2}, True),  # a v1 agent echoing the request
        ({"protocolVersion": 2, "info": {"name": "a", "version": "1"}}, False),
        ({"protocolVersion": 1, "info": {"name": "a", "version": "1"}}, False),  # v2's shape
        ({"protocolVersion": 2}, False),
        (None, False),
    ],
)
def test_a_result_is_v1_when_it_lacks_info_and_says_1_or_uses_v1_names(
    result: object, v1: bool
) -> None:
    assert is_v1_result(result) is v1


@pytest.mark.parametrize("schema", ["v1", "aug", "nov"])
def test_the_version_1_request_is_valid_under_v1_and_every_v2_draft(schema: str) -> None:
    request = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize_params(1)}
    assert SchemaValidator(schema).check("InitializeRequest", request["params"]) is None
    assert {"clientInfo", "clientCapabilities", "info", "capabilities"} <= request["params"].keys()


def test_a_request_for_2_is_in_v2_shape_only() -> None:
    assert set(initialize_params(2)) == {"protocolVersion", "info", "capabilities"}


def test_a_v1_initialize_result_is_judged_by_the_v1_schema_not_the_v2_one() -> None:
    frame = {"jsonrpc": "2.0", "id": 1, "result": V1_RESULT}
    assert SchemaValidator("v1").check_frame(frame, "initialize") is None
    problem = SchemaValidator("aug").check_frame(frame, "initialize")
    assert problem == "InitializeResponse at (top): 'info' is a required property"

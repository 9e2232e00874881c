"""Negotiation: the version is read from raw initialize bytes before anything else."""

from __future__ import annotations

import msgspec
import pytest

from acp2.compat.v1.negotiate import NegotiationError, request_version, result_version


@pytest.mark.parametrize(
    ("params", "version"),
    [
        (b'{"protocolVersion":1,"clientInfo":{"name":"zed","version":"0"}}', 1),
        (b'{"protocolVersion":2,"info":{"name":"x","version":"1"}}', 2),
        (b'{"protocolVersion":7}', 2),
        # acp2 check's old probe: v2 shape with version 1 -> the number decides.
        (b'{"protocolVersion":1,"info":{"name":"x","version":"1"}}', 1),
    ],
)
def test_request_version_is_1_for_1_and_2_for_anything_higher(params: bytes, version: int) -> None:
    assert request_version(params) == version


def test_request_version_reads_raw_params_without_decoding_the_rest() -> None:
    # The rest is not even a valid v1 or v2 initialize: only protocolVersion is read.
    assert request_version(msgspec.Raw(b'{"clientCapabilities":42,"protocolVersion":1}')) == 1


@pytest.mark.parametrize(
    ("params", "says"),
    [
        (b"{}", "no protocolVersion"),
        (b"[1]", "must be a JSON object"),
        (b"{", "not valid JSON"),
        (b'{"protocolVersion":"1"}', "invalid protocolVersion '1'"),
        (b'{"protocolVersion":true}', "invalid protocolVersion True"),
        (b'{"protocolVersion":0}', "invalid protocolVersion 0"),
        (b'{"protocolVersion":1.5}', "invalid protocolVersion 1.5"),
        (b'{"protocolVersion":70000}', "invalid protocolVersion 70000"),
    ],
)
def test_malformed_initialize_params_raise_an_invalid_params_error(
    params: bytes, says: str
) -> None:
    with pytest.raises(NegotiationError, match=says) as info:
        request_version(params)
    assert info.value.code == -32602


@pytest.mark.parametrize(
    ("result", "version"),
    [
        (b'{"protocolVersion":1,"agentInfo":{"name":"a","version":"1"}}', 1),
        (b'{"protocolVersion":1}', 1),
        (b'{"protocolVersion":2,"info":{"name":"a","version":"1"},"capabilities":{}}', 2),
        # A v1 agent echoing the requested 2 back: no `info`, v1 field names.
        (b'{"protocolVersion":2,"agentCapabilities":{"loadSession":true}}', 1),
        (b'{"protocolVersion":2,"agentInfo":{"name":"a","version":"1"}}', 1),
        (b'{"protocolVersion":2}', 1),
        # A v2 agent that happens to answer 1 is v1 by its number.
        (b'{"protocolVersion":1,"info":{"name":"a","version":"1"}}', 1),
    ],
)
def test_result_version_decides_by_the_number_and_the_shape(result: bytes, version: int) -> None:
    assert result_version(result) == version


def test_a_result_without_a_version_is_an_error() -> None:
    with pytest.raises(NegotiationError, match="initialize result has no protocolVersion"):
        result_version(b'{"info":{"name":"a","version":"1"}}')

"""Fuzz: random bytes and random JSON never break a Connection (TR-01, TR-13).

After any garbage, every frame the connection wrote is strict JSON-RPC and a normal
request still gets its normal answer.
"""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers import raw_peer

pytestmark = pytest.mark.anyio

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4)
    ),
    max_leaves=12,
)
ids = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=4) | json_values
envelopes = st.fixed_dictionaries(
    {},
    optional={
        "jsonrpc": st.sampled_from(["2.0", "1.0", 2.0, None]),
        "id": ids,
        "method": st.sampled_from(["echo", "$/cancel_request", "nope", "_x"]) | json_values,
        "params": json_values,
        "result": json_values,
        "error": st.fixed_dictionaries({"code": json_values, "message": json_values}) | json_values,
    },
)


def line(value: Any) -> bytes:
    return json.dumps(value).encode() + b"\n"


garbage = st.lists(
    st.binary(max_size=64)
    | json_values.map(line)
    | envelopes.map(line)
    | st.lists(envelopes, max_size=3).map(line),
    max_size=8,
)


class Text(msgspec.Struct):
    text: str


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(chunks=garbage)
async def test_random_bytes_and_json_never_break_the_connection(chunks: list[bytes]) -> None:
    async def echo(params: Text) -> Text:
        return params

    async with raw_peer() as (conn, wire):
        conn.on_request("echo", Text, echo)
        for chunk in chunks:
            await wire.send(chunk)
        await wire.send(b"\n")
        final = {"jsonrpc": "2.0", "id": "final-check", "method": "echo", "params": {"text": "ok"}}
        await wire.send_json(final)
        while True:
            frame = await wire.frame()  # each is checked as strict JSON-RPC
            if isinstance(frame, dict) and frame.get("id") == "final-check":
                break
        assert frame == {"jsonrpc": "2.0", "id": "final-check", "result": {"text": "ok"}}
        assert not conn.closed

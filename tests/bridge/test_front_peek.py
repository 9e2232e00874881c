"""``peek_version``: the version of the first ``initialize``, every byte given back."""

from __future__ import annotations

import json

import anyio
import pytest
from wire import TIMEOUT, ZED_INITIALIZE

from acp2.bridge.peek import peek_version
from acp2.transport.memory import memory_pair

pytestmark = pytest.mark.anyio


def line(params: object, method: str = "initialize") -> bytes:
    message = {"jsonrpc": "2.0", "id": 0, "method": method, "params": params}
    return json.dumps(message).encode() + b"\n"


async def peek(*chunks: bytes) -> tuple[int, bytes]:
    """Send ``chunks``, close, peek: the version and everything the peeked transport reads."""
    a, b = memory_pair()
    with anyio.fail_after(TIMEOUT):
        for chunk in chunks:
            await a.send(chunk)
        await a.aclose()
        version, replay = await peek_version(b)
        data = b""
        while chunk := await replay.receive():
            data += chunk
    return version, data


async def test_a_v1_initialize_split_across_chunks_is_seen_as_1_and_replayed_whole() -> None:
    sent = line(ZED_INITIALIZE) + line({}, "session/new")

    version, replayed = await peek(sent[:7], sent[7:30], sent[30:])

    assert (version, replayed) == (1, sent)


@pytest.mark.parametrize(
    "first",
    [
        line({"protocolVersion": 2, "info": {"name": "c", "version": "1"}, "capabilities": {}}),
        line({"protocolVersion": 1}, "session/new"),
        b"[]\n",
        b"not json\n",
    ],
    ids=["v2", "not-initialize", "batch", "garbage"],
)
async def test_anything_but_an_initialize_asking_for_1_goes_to_v2_unchanged(first: bytes) -> None:
    assert await peek(first) == (2, first)


async def test_a_request_for_1_that_also_carries_v2_keys_is_v1() -> None:
    # acp2 check's version probe: valid under v1 and v2, so it is answered as v1 asked.
    info = {"name": "c", "version": "1"}
    both = {"protocolVersion": 1, "info": info, "capabilities": {}, "clientInfo": info}
    first = line({**both, "clientCapabilities": {"fs": {"readTextFile": False}}})

    assert await peek(first) == (1, first)


async def test_an_unreadable_version_is_answered_invalid_params_and_the_next_line_peeked() -> None:
    a, b = memory_pair()
    good = line(ZED_INITIALIZE)
    with anyio.fail_after(TIMEOUT):
        await a.send(line({"protocolVersion": True}) + good)
        version, replay = await peek_version(b)
        answer = json.loads(await a.receive())
        replayed = await replay.receive()

    assert answer["id"] == 0
    assert answer["error"]["code"] == -32602
    assert (version, replayed) == (1, good)

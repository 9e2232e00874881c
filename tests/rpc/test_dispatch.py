"""Dispatch (the peer, then the dispatcher): whatever one message does to the decoder or a
handler stays that message's problem (issue 10, section 1); the next one is handled."""

from __future__ import annotations

import logging
from typing import Any

import anyio
import msgspec
import pytest

from helpers import raw_peer
from helpers.timeouts import TIMEOUT

pytestmark = pytest.mark.anyio


class Explosive(msgspec.Struct):
    """Params whose decoding raises something no decoder error covers."""

    boom: bool = False

    def __post_init__(self) -> None:
        if self.boom:
            raise RuntimeError("unexpected failure in decoding")


class Text(msgspec.Struct):
    text: str


async def echo(params: Any) -> Any:
    return params


CANONICAL = b'{"jsonrpc":"2.0","method":"n","params":{"boom":true}}\n'
REORDERED = b'{"params":{"boom":true},"method":"n","jsonrpc":"2.0"}\n'


@pytest.mark.parametrize("line", [CANONICAL, REORDERED], ids=["fast-path", "general-path"])
async def test_a_notification_whose_decoding_raises_is_dropped_with_one_log_line(
    line: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    seen: list[Explosive] = []
    with anyio.fail_after(TIMEOUT):
        async with raw_peer() as (conn, wire):
            conn.on_notification("n", Explosive, seen.append)
            conn.on_request("echo", Text, echo)
            with caplog.at_level(logging.WARNING, logger="acp2.rpc"):
                await wire.send(line)
                await wire.send(b'{"jsonrpc":"2.0","method":"n","params":{}}\n')
                await wire.send_json(
                    {"jsonrpc": "2.0", "id": 1, "method": "echo", "params": {"text": "ok"}}
                )
                assert (await wire.frame())["result"] == {"text": "ok"}
            assert seen == [Explosive()]
            assert not conn.closed
    logged = [r for r in caplog.records if r.name == "acp2.rpc"]
    assert len(logged) == 1
    assert "unexpected failure in decoding" in logged[0].getMessage()


async def test_a_request_whose_decoding_raises_is_answered_invalid_params_once() -> None:
    with anyio.fail_after(TIMEOUT):
        async with raw_peer() as (conn, wire):
            conn.on_request("r", Explosive, echo)
            await wire.send_json(
                {"jsonrpc": "2.0", "id": 7, "method": "r", "params": {"boom": True}}
            )
            frame = await wire.frame()
            assert frame["id"] == 7
            assert frame["error"]["code"] == -32602
            assert "unexpected failure in decoding" in frame["error"]["message"]
            await wire.ping()  # nothing else was written (answered exactly once)
        # leaving did not wait for a request left half-registered


async def test_a_notification_handler_raising_recursion_error_logs_one_line_without_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def deep(params: Text) -> None:
        raise RecursionError("maximum recursion depth exceeded")

    with anyio.fail_after(TIMEOUT):
        async with raw_peer() as (conn, wire):
            conn.on_notification("deep", Text, deep)
            with caplog.at_level(logging.WARNING, logger="acp2.rpc"):
                await wire.send_json({"jsonrpc": "2.0", "method": "deep", "params": {"text": "x"}})
                await wire.ping()
            assert not conn.closed
    logged = [r for r in caplog.records if r.name == "acp2.rpc"]
    assert [r.exc_info for r in logged] == [None]
    assert "nested too deeply" in logged[0].getMessage()


async def test_a_batch_entry_whose_handling_raises_gets_its_error_inside_the_batch_reply() -> None:
    with anyio.fail_after(TIMEOUT):
        async with raw_peer() as (conn, wire):
            conn.on_request("echo", Text, echo)
            conn.on_notification("n", Explosive, lambda params: None)
            bad = {"jsonrpc": "2.0", "method": "n", "params": {"boom": True}}
            good = {"jsonrpc": "2.0", "id": 1, "method": "echo", "params": {"text": "ok"}}
            await wire.send_json([bad, good])
            reply = await wire.frame()
            assert {"jsonrpc": "2.0", "id": 1, "result": {"text": "ok"}} in reply
            assert not conn.closed


@pytest.mark.parametrize("depth", [1_000, 10_000, 100_000])
async def test_a_deeply_nested_request_is_answered_with_its_own_id(depth: int) -> None:
    deep = b"[" * depth + b"]" * depth
    with anyio.fail_after(TIMEOUT):
        async with raw_peer() as (conn, wire):
            conn.on_request("echo", Text, echo)
            await wire.send(b'{"jsonrpc":"2.0","id":"d","method":"echo","params":%s}\n' % deep)
            frame = await wire.frame()
            assert frame == {
                "jsonrpc": "2.0",
                "id": "d",
                "error": {"code": -32600, "message": "Invalid request: JSON nested too deeply"},
            }
            await wire.ping()


async def test_the_last_protocol_error_of_the_peer_is_kept_for_error_messages() -> None:
    with anyio.fail_after(TIMEOUT):
        async with raw_peer() as (conn, wire):
            assert (conn.protocol_errors, conn.last_protocol_error) == (0, None)
            await wire.send(b"}{ not json\n")
            await wire.frame()
            await wire.send(b'{"jsonrpc":"1.0","id":1,"method":"m"}\n')
            await wire.frame()
            assert conn.protocol_errors == 2
            assert conn.last_protocol_error == 'Invalid message: "jsonrpc" must be "2.0"'

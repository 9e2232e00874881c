"""Wire-level behaviour of Connection against raw bytes (TR-01, TR-02, TR-08, TR-11,
TR-13, TR-14, TR-15, TR-16, D-01, D-02), and oversized messages."""

from __future__ import annotations

from typing import Any

import anyio
import msgspec
import pytest

from acp2.errors import RemoteProtocolError
from helpers import raw_peer

pytestmark = pytest.mark.anyio


class Echo(msgspec.Struct):
    text: str


def req(rid: Any, method: str, params: Any = None) -> dict[str, Any]:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        msg["params"] = params
    return msg


def note(method: str, params: Any = None) -> dict[str, Any]:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        msg["params"] = params
    return msg


async def echo(params: Echo) -> Echo:
    return params


@pytest.mark.parametrize(
    "line",
    [
        b'{"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":"a"},"result":1}\n',
        b'{"jsonrpc":"1.0","id":1,"method":"echo","params":{"text":"a"}}\n',
        b'{"id":1,"method":"echo","params":{"text":"a"}}\n',
        b'{"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":"\xff"}}\n',
        b'{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"m"}}\n',
    ],
)
async def test_tr01_malformed_envelopes_and_invalid_utf8_are_never_dispatched(line: bytes) -> None:
    calls: list[Echo] = []

    async def record(params: Echo) -> None:
        calls.append(params)

    async with raw_peer() as (conn, wire):
        conn.on_request("echo", Echo, record)
        await wire.send(line)
        reply = await wire.frame()
        assert reply["error"]["code"] in (-32600, -32700)
        await wire.ping()
        assert calls == []


async def test_tr02_crlf_terminated_lines_and_blank_lines_are_accepted() -> None:
    async with raw_peer() as (conn, wire):
        conn.on_request("echo", Echo, echo)
        await wire.send(b'\r\n\n{"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":"a"}}\r\n')
        assert await wire.frame() == {"jsonrpc": "2.0", "id": 1, "result": {"text": "a"}}


async def test_tr02_message_split_across_many_writes_is_reassembled() -> None:
    line = b'{"jsonrpc":"2.0","id":"x","method":"echo","params":{"text":"\xe2\x80\xa8"}}\n'
    async with raw_peer() as (conn, wire):
        conn.on_request("echo", Echo, echo)
        for i in range(len(line)):
            await wire.send(line[i : i + 1])
        assert await wire.frame() == {"jsonrpc": "2.0", "id": "x", "result": {"text": "\u2028"}}


@pytest.mark.parametrize(
    "message",
    [
        note("echo", {"text": "ok"}),
        note("echo", {"wrong": 1}),
        note("boom"),
        note("foo/bar", {"a": 1}),
        note("_x/y"),
        note("$/unknown_protocol_thing"),
        note("$/cancel_request", {"requestId": 12345}),
        note("$/cancel_request", {"bogus": True}),
    ],
)
async def test_tr08_notifications_are_never_answered(message: dict[str, Any]) -> None:
    async def boom(_: Any) -> None:
        raise RuntimeError("handler failed")

    async with raw_peer() as (conn, wire):
        conn.on_notification("echo", Echo, echo)  # type: ignore[arg-type]
        conn.on_notification("boom", msgspec.Raw, boom)
        await wire.send_json(message)
        await wire.ping()


@pytest.mark.parametrize("method", ["session/load", "fs/read_text_file", "authenticate", "_x/y"])
async def test_tr11_unknown_and_removed_v1_methods_get_method_not_found(method: str) -> None:
    async with raw_peer() as (_, wire):
        await wire.send_json(req(4, method, {}))
        reply = await wire.frame()
        assert reply["id"] == 4
        assert reply["error"]["code"] == -32601


async def test_tr13_invalid_json_gets_parse_error_with_null_id_and_connection_survives() -> None:
    async with raw_peer() as (conn, wire):
        conn.on_request("echo", Echo, echo)
        await wire.send(b"{bad json\n")
        reply = await wire.frame()
        assert reply["id"] is None
        assert reply["error"]["code"] == -32700
        await wire.send_json(req(1, "echo", {"text": "still here"}))
        assert (await wire.frame())["result"] == {"text": "still here"}


@pytest.mark.parametrize("line", [b"5", b'"text"', b"null", b"true", b'{"jsonrpc":"2.0"}'])
async def test_tr13_valid_json_that_is_not_a_request_gets_invalid_request_null_id(
    line: bytes,
) -> None:
    async with raw_peer() as (_, wire):
        await wire.send(line + b"\n")
        reply = await wire.frame()
        assert reply["id"] is None
        assert reply["error"]["code"] == -32600
        await wire.ping()


@pytest.mark.parametrize("rid", [None, True, 1.5, 2.0, {"a": 1}])
async def test_d02_tr10_null_bool_and_fractional_ids_get_invalid_request_with_null_id(
    rid: Any,
) -> None:
    async with raw_peer() as (conn, wire):
        conn.on_request("echo", Echo, echo)
        await wire.send_json(req(rid, "echo", {"text": "a"}))
        reply = await wire.frame()
        assert reply["id"] is None
        assert reply["error"]["code"] == -32600


async def test_tr14_batch_gets_one_array_with_an_entry_per_request_and_invalid_entry() -> None:
    seen: list[str] = []

    async def on_note(params: Echo) -> None:
        seen.append(params.text)

    async with raw_peer() as (conn, wire):
        conn.on_request("echo", Echo, echo)
        conn.on_notification("note", Echo, on_note)
        batch = [
            req(1, "echo", {"text": "one"}),
            note("note", {"text": "n"}),
            5,
            req("2", "echo", {"text": "two"}),
        ]
        await wire.send_json(batch)
        reply = await wire.frame()
        assert isinstance(reply, list)
        assert len(reply) == 3
        by_id = {str(entry["id"]): entry for entry in reply}
        assert by_id["1"]["result"] == {"text": "one"}
        assert by_id["2"]["result"] == {"text": "two"}
        assert by_id["2"]["id"] == "2"
        assert by_id["None"]["error"]["code"] == -32600
        assert seen == ["n"]


async def test_tr14_empty_batch_gets_a_single_error_object_not_an_array() -> None:
    async with raw_peer() as (_, wire):
        await wire.send(b"[]\n")
        reply = await wire.frame()
        assert isinstance(reply, dict)
        assert reply["id"] is None
        assert reply["error"]["code"] == -32600


async def test_tr08_tr14_all_notification_batch_gets_no_reply() -> None:
    async with raw_peer() as (_, wire):
        await wire.send_json([note("a"), note("b", {"x": 1})])
        await wire.ping()


async def test_tr14_batch_requests_run_concurrently_and_reply_after_all_finish() -> None:
    release = anyio.Event()
    started: list[str] = []

    async def slow(params: Echo) -> Echo:
        started.append(params.text)
        if params.text == "first":
            await release.wait()
        return params

    async def unblock(params: Echo) -> Echo:
        started.append(params.text)
        release.set()
        return params

    async with raw_peer() as (conn, wire):
        conn.on_request("slow", Echo, slow)
        conn.on_request("unblock", Echo, unblock)
        await wire.send_json([req(1, "slow", {"text": "first"}), req(2, "unblock", {"text": "x"})])
        reply = await wire.frame()
        assert sorted(entry["id"] for entry in reply) == [1, 2]
        assert started == ["first", "x"]


async def test_tr14_invalid_params_and_unknown_methods_inside_a_batch_get_own_entries() -> None:
    async with raw_peer() as (conn, wire):
        conn.on_request("echo", Echo, echo)
        await wire.send_json(
            [req(1, "echo", {"bad": 1}), req(2, "nope"), req(3, "echo", {"text": "t"})]
        )
        reply = {entry["id"]: entry for entry in await wire.frame()}
        assert reply[1]["error"]["code"] == -32602
        assert reply[2]["error"]["code"] == -32601
        assert reply[3]["result"] == {"text": "t"}


async def test_oversized_request_is_rejected_alone_with_its_id() -> None:
    async with raw_peer(max_message_size=1000) as (conn, wire):
        conn.on_request("echo", Echo, echo)
        await wire.send_json(req(7, "echo", {"text": "x" * 5000}))
        reply = await wire.frame()
        assert reply["id"] == 7
        assert reply["error"]["code"] == -32600
        await wire.send_json(req(8, "echo", {"text": "small"}))
        assert await wire.frame() == {"jsonrpc": "2.0", "id": 8, "result": {"text": "small"}}


async def test_oversized_notification_is_dropped_without_reply() -> None:
    async with raw_peer(max_message_size=1000) as (conn, wire):
        conn.on_notification("echo", Echo, echo)  # type: ignore[arg-type]
        await wire.send_json(note("echo", {"text": "x" * 5000}))
        await wire.ping()


async def test_oversized_response_fails_only_its_own_request() -> None:
    async with raw_peer(max_message_size=1000) as (conn, wire):
        results: dict[str, Any] = {}

        async def call(key: str) -> None:
            try:
                results[key] = await conn.request("m", {"k": key}, Echo)
            except RemoteProtocolError as exc:
                results[key] = exc

        async with anyio.create_task_group() as tg:
            tg.start_soon(call, "big")
            first = await wire.frame()
            tg.start_soon(call, "small")
            second = await wire.frame()
            await wire.send_json(
                {"jsonrpc": "2.0", "id": first["id"], "result": {"text": "y" * 5000}}
            )
            await wire.send_json({"jsonrpc": "2.0", "id": second["id"], "result": {"text": "ok"}})
            assert (await wire.frame())["error"]["code"] == -32600  # we say what went wrong
        assert isinstance(results["big"], RemoteProtocolError)
        assert results["small"] == Echo("ok")


async def test_tr15_tr16_d01_the_connection_has_no_way_to_send_batches() -> None:
    from acp2.rpc.connection import Connection

    assert not [name for name in dir(Connection) if "batch" in name.lower() and name[0] != "_"]
    async with raw_peer() as (conn, wire):
        conn.send_notification_nowait("a", {"x": 1})
        conn.send_notification_nowait("b", {"x": 2})
        await conn.notify("c", None)
        frames = [await wire.frame() for _ in range(3)]
        assert all(isinstance(frame, dict) for frame in frames)
        assert [frame["method"] for frame in frames] == ["a", "b", "c"]

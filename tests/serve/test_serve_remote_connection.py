"""One remote connection without a server (src/acp2/serve/remote_connection.py): how one write of
the agent side, many lines at once, is split and queued on the outlets."""

from __future__ import annotations

import json
from typing import Any

import anyio
import msgspec
import pytest

from acp2.rpc.envelope import read
from acp2.serve import ServeConfig
from acp2.serve.cursor import CursorRecorder
from acp2.serve.remote_connection import RemoteConnection
from acp2.store.cursors import MemoryCursors
from acp2.transport.durable import Retention
from helpers.timeouts import TIMEOUT

pytestmark = pytest.mark.anyio


def line(message: dict[str, Any]) -> bytes:
    return msgspec.json.encode(message)


def update(session: str, n: int) -> bytes:
    params = {"sessionId": session, "update": {"sessionUpdate": "agent_message_chunk", "n": n}}
    return line({"jsonrpc": "2.0", "method": "session/update", "params": params})


def texts(items: list[tuple[int, bytes]]) -> list[Any]:
    return [json.loads(message) for _, message in items]


async def test_one_write_of_many_lines_reaches_each_sse_stream_in_order() -> None:
    connection = RemoteConnection("c", "p", "http", ServeConfig(), Retention())
    assert connection.router.posted(read(line({"id": 7, "method": "x", "params": {}})), "b")
    escaped = 'we\\"ird'
    lines = [
        update("a", 1),
        update("a", 2),
        update("b", 1),
        line({"jsonrpc": "2.0", "id": 7, "result": {}}),  # answers a POST scoped to "b"
        line({"jsonrpc": "2.0", "method": "note", "params": {}}),
        update("a", 3),
        b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"'
        + escaped.encode()
        + b'","update":{"sessionUpdate":"agent_message_chunk"}}}',
    ]
    with anyio.fail_after(TIMEOUT):
        await connection.send(b"\n".join(lines) + b"\n  \n")
    a, b = connection.sessions["a"].take(), connection.sessions["b"].take()
    assert [seq for seq, _ in a] == [1, 2, 3]
    assert [m["params"]["update"]["n"] for m in texts(a)] == [1, 2, 3]
    assert [m.get("id") for m in texts(b)] == [None, 7]
    assert [m["method"] for m in texts(connection.main.take())] == ["note"]
    assert [m["params"]["sessionId"] for m in texts(connection.sessions['we"ird'].take())] == [
        'we"ird'
    ]
    assert connection.held == sum(len(x) for x in lines)


async def test_a_partial_last_line_waits_for_the_rest_of_the_write() -> None:
    connection = RemoteConnection("c", "p", "websocket", ServeConfig(), Retention())
    whole = update("a", 1)
    with anyio.fail_after(TIMEOUT):
        await connection.send(whole + b"\r\n" + whole[:10])
        await connection.send(whole[10:] + b"\n")
    assert connection.main.take() == [(1, whole), (2, whole)]


async def test_the_recorder_sees_every_line_of_a_bulk_write_under_its_seq() -> None:
    connection = RemoteConnection("c", "p", "websocket", ServeConfig(), Retention())
    recorder = connection.recorder = CursorRecorder(MemoryCursors(), "c", "p")
    lines = [update("a", n) for n in range(5)] + [line({"jsonrpc": "2.0", "id": 1, "result": {}})]
    with anyio.fail_after(TIMEOUT):
        await connection.send(b"\n".join(lines) + b"\n")
        await connection.send(update("a", 5) + b"\n")
    assert recorder.cursor.sent == 7
    assert [type(mark).__name__ for mark in recorder.cursor.marks] == ["Run", "Other", "Run"]


async def test_a_write_given_as_a_bytearray_is_queued_as_bytes() -> None:
    connection = RemoteConnection("c", "p", "websocket", ServeConfig(), Retention())
    whole = update("a", 1)
    with anyio.fail_after(TIMEOUT):
        await connection.send(bytearray(whole + b"\n"))
    assert connection.main.take() == [(1, whole)]

"""What a new connection does with the requests in flight (acp2.client.rejoin_book, sans-IO).

The method table's ``retry`` column decides: ``safe`` is sent again, ``keyed`` is sent
again when it carries its key, ``never`` (and a method outside the table) is failed with
``-32603``. The transport that carries the frames knows none of it.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest

import acp2
from acp2.client.rejoin_book import RejoinBook
from acp2.errors import ConnectionClosed
from acp2.schema.methods import METHODS


def request(rid: Any, method: str, params: Any = None) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message).encode()


def answer(rid: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": rid, "result": {}}).encode()


INIT = request(0, "initialize", {"protocolVersion": 2})
PROMPT = {"sessionId": "s", "prompt": []}


def test_the_retry_column_decides_what_is_sent_again() -> None:
    assert METHODS["session/list"].retry == "safe"
    assert METHODS["session/prompt"].retry == "keyed"
    assert METHODS["session/new"].retry == "never"
    book = RejoinBook()
    book.sent(INIT)
    book.received(answer(0))
    listing = request(1, "session/list", {})
    keyed = request(2, "session/prompt", {**PROMPT, "idempotencyKey": "k"})
    unkeyed = request(3, "session/prompt", PROMPT)
    new = request(4, "session/new", {"cwd": "/"})
    unknown = request("x", "_vendor/thing", {})
    for message in (listing, keyed, unkeyed, new, unknown):
        book.sent(message)
    assert book.to_resend() == [listing, keyed]
    failed = [json.loads(line) for line in book.fail_lost().splitlines()]
    assert [f["id"] for f in failed] == [3, 4, "x"]
    assert {f["error"]["code"] for f in failed} == {-32603}
    assert book.fail_lost() == b""  # failed once, then forgotten


def test_a_request_answered_meanwhile_is_not_sent_again() -> None:
    book = RejoinBook()
    book.sent(INIT)
    first = request(1, "session/prompt", {**PROMPT, "idempotencyKey": "a"})
    second = request(2, "session/prompt", {**PROMPT, "idempotencyKey": "b"})
    book.sent(first)
    book.sent(second)
    resend = book.to_resend()
    book.received(answer(1) + b"\n")
    assert book.still_waiting(resend) == [second]


def test_a_new_connection_starts_with_the_recorded_initialize_under_its_own_id() -> None:
    book = RejoinBook()
    with pytest.raises(ConnectionClosed):
        book.hello()
    book.sent(INIT)
    hello = json.loads(book.hello())
    assert hello["method"] == "initialize"
    assert hello["params"] == {"protocolVersion": 2}
    assert isinstance(hello["id"], str)
    update = b'{"jsonrpc":"2.0","method":"session/update","params":{}}'
    # Its answer is swallowed; everything else reaches the rpc layer.
    assert book.received(answer(hello["id"]) + b"\n" + update + b"\n") == update + b"\n"
    assert INIT not in book.to_resend()  # hello() sends it, never the resend


def test_only_the_re_resume_goes_out_while_sessions_are_resumed() -> None:
    book = RejoinBook()
    assert book.sent(request(1, "session/resume", {"sessionId": "s", "cwd": "/"}))
    assert book.sent(request(2, "_acp2/session/attach", {"sessionId": "s"}))
    assert not book.sent(request(3, "session/prompt", PROMPT))
    assert not book.sent(b'{"jsonrpc":"2.0","method":"session/cancel","params":{}}')
    assert not book.sent(b"not json")


def test_the_reconnecting_transport_knows_no_method_meaning() -> None:
    source = (Path(acp2.__file__).parent / "transport" / "rejoin.py").read_text()
    imported = {
        node.module or ""
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.ImportFrom)
    }
    assert not [m for m in imported if m.startswith(("acp2.rpc", "acp2.schema"))]

"""Attack: a hostile sequence number in a header (issue 24, item 9).

``Acp2-Seq`` (a durable POST's number), ``Acp2-Ack`` (a durable client's confirmation)
and ``Last-Event-ID`` (an SSE reopen) are read by ``durable.header_seq``. Before the fix,
a 5,000-digit ``Acp2-Ack`` or ``Last-Event-ID`` reached ``int()``, which raises past
CPython's 4,300-digit limit, and the request was answered 500 with a traceback; and
``Acp2-Seq`` went to ``int()`` directly, which takes ``+1`` and ``1_0``. Now each is 1 to
19 ASCII digits fitting a signed 64-bit integer, and anything else is a 400, against a
real ``acp2 serve`` on 127.0.0.1.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

import httpx
import pytest

from acp2.transport.durable import header_seq
from helpers.serve_process import serving
from helpers.timeouts import TIMEOUT

pytestmark = pytest.mark.anyio

INIT = {"protocolVersion": 2, "capabilities": {}, "info": {"name": "t", "version": "0"}}
HUGE = "9" * 5_000
BAD = ["+1", "1_0", "-1", "0x1", HUGE, "9" * 20, str(2**63)]


@contextmanager
def served(tmp_path: Path) -> Iterator[tuple[str, list[str]]]:
    """``acp2 serve --test-agent`` on 127.0.0.1: its /acp URL and its stderr lines."""
    lines: list[str] = []
    with serving(tmp_path, "--test-agent", sink=lines) as port:
        yield f"http://127.0.0.1:{port}/acp", lines


@asynccontextmanager
async def durable_connection(url: str) -> AsyncIterator[tuple[httpx.AsyncClient, dict[str, str]]]:
    """A client and the headers naming a durable connection it opened (seq 1 taken)."""
    headers = {"Content-Type": "application/json", "Acp2-Durable": "1", "Acp2-Seq": "1"}
    body = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT})
    async with httpx.AsyncClient(timeout=TIMEOUT) as client:
        answer = await client.post(url, content=body, headers=headers)
        assert answer.status_code == 200, answer.text
        assert "acp2-durable" in answer.headers
        named = {"Content-Type": "application/json", "Acp-Connection-Id": ""}
        named["Acp-Connection-Id"] = answer.headers["acp-connection-id"]
        yield client, named


@pytest.mark.parametrize("value", ["+1", " 1", "1_0", "¹", HUGE, "9" * 20, str(2**63), ""])
def test_a_header_seq_is_ascii_digits_fitting_int64_or_nothing(value: str) -> None:
    assert header_seq(value) is None


def test_the_largest_int64_is_still_a_header_seq() -> None:
    assert header_seq(str(2**63 - 1)) == 2**63 - 1
    assert header_seq("0") == 0


async def test_hostile_seq_headers_are_answered_400_not_500(tmp_path: Path) -> None:
    with served(tmp_path) as (url, log):
        async with durable_connection(url) as (client, named):
            for value in BAD:
                ack = await client.post(url, headers={**named, "Acp2-Ack": value})
                assert ack.status_code == 400, (value[:30], ack.status_code, ack.text)
                listing = {"jsonrpc": "2.0", "id": 5, "method": "session/list", "params": {}}
                post = await client.post(
                    url, content=json.dumps(listing), headers={**named, "Acp2-Seq": value}
                )
                assert post.status_code == 400, (value[:30], post.status_code, post.text)
            reopen = {**named, "Accept": "text/event-stream", "Last-Event-ID": HUGE}
            events = await client.get(url, headers=reopen)
            assert events.status_code == 400, events.text
            assert (await client.post(url, headers={**named, "Acp2-Ack": "0"})).status_code == 204
    assert "Traceback" not in "".join(log), "".join(log)[-2000:]

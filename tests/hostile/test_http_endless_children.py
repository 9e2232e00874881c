"""Attack: a Streamable HTTP server that announces endless child sessions.

acp2's HTTP client opens a child session's SSE stream when the child's parent announces
it with ``subagent_update`` (the server sends a child's updates to the child's own
stream). Before that fix it opened none, so a child's updates never arrived; a server
that names a new child in every notification must still not make the client open a GET
per name: past :data:`~acp2.transport.http_client.MAX_SESSION_STREAMS` session streams
the announcements open nothing. A fake server on 127.0.0.1 (threads, real sockets)
announces more children than that and holds every stream it is asked for open.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler

import anyio
import pytest

from acp2.transport.http_client import MAX_SESSION_STREAMS, open_http
from acp2.transport.remote_base import CONNECTION_HEADER, SESSION_HEADER
from helpers.http_fake import serve_on_loopback
from helpers.timeouts import TIMEOUT

pytestmark = pytest.mark.anyio

#: The children the fake announces: more than the client may open streams for.
ANNOUNCED = MAX_SESSION_STREAMS + 50
MARKER = b'{"jsonrpc":"2.0","method":"_fake/done"}'
INITIALIZE = b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":2}}\n'


def announcement(index: int) -> bytes:
    update = {"sessionUpdate": "subagent_update", "sessionId": f"child-{index}"}
    params = {"sessionId": "parent", "update": update}
    return json.dumps({"jsonrpc": "2.0", "method": "session/update", "params": params}).encode()


class Fake:
    """The fake server's port, and the event that lets its held streams end."""

    port = 0

    def __init__(self) -> None:
        self.done = threading.Event()


class Handler(BaseHTTPRequestHandler):
    fake: Fake

    def log_message(self, format: str, *args: object) -> None:
        """Quiet: the test reads what it needs from :class:`Fake`."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        body = b'{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":2}}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header(CONNECTION_HEADER, "fake-connection")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_DELETE(self) -> None:
        self.send_response(202)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        if self.headers.get(SESSION_HEADER) is None:
            events = [announcement(index) for index in range(ANNOUNCED)] + [MARKER]
            self.wfile.write(b"".join(b"data: " + event + b"\n\n" for event in events))
        self.wfile.flush()
        self.fake.done.wait(TIMEOUT)


async def test_an_http_client_opens_a_stream_per_announced_child_up_to_its_bound() -> None:
    with serve_on_loopback(Fake(), Handler) as fake, anyio.fail_after(TIMEOUT):
        try:
            url = f"http://127.0.0.1:{fake.port}/acp"
            async with open_http(url, durable=False) as transport:
                await transport.send(INITIALIZE)
                seen = b""
                while MARKER not in seen:
                    got = await transport.receive()
                    assert got, "the stream ended before the fake's last event"
                    seen = got
                sessions = transport.streams - {None}
                assert len(sessions) == MAX_SESSION_STREAMS
                assert sessions == {f"child-{index}" for index in range(MAX_SESSION_STREAMS)}
                fake.done.set()  # the held streams end before the client's pool must close
        finally:
            fake.done.set()

"""A fake OpenAI-compatible chat-completions server: real HTTP and SSE on 127.0.0.1.

Each test scripts the replies in order (:class:`Reply`); the server records every request
body and header, streams the scripted SSE events, can stop mid-stream at a :class:`Gate`
until the test opens it, and notices when a client closes a held stream (``hold=True``
blocks reading the socket until it returns end-of-file, then sets ``disconnected``).
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from helpers.http_fake import serve_on_loopback

#: Longest time the server thread waits on anything a test controls.
SERVER_WAIT = 20.0


class Gate:
    """A point in a stream where the server waits until the test calls :meth:`open`."""

    def __init__(self) -> None:
        self.reached = threading.Event()
        self._open = threading.Event()

    def open(self) -> None:
        """Let the stream continue."""
        self._open.set()

    def wait(self) -> None:
        """(server side) Mark the gate reached and wait for it to open."""
        self.reached.set()
        self._open.wait(SERVER_WAIT)


@dataclass
class Reply:
    """One scripted answer: an error status with a JSON body, or a 200 SSE stream.

    ``events`` are chunk dicts (sent as ``data: <json>``), raw strings (sent as given after
    ``data: ``) or :class:`Gate` objects; ``done`` appends ``data: [DONE]``; ``hold`` keeps
    the stream open after the events until the client closes it.
    """

    status: int = 200
    events: list[Any] = field(default_factory=list)
    headers: dict[str, str] = field(default_factory=dict)
    body: Any = None
    done: bool = True
    hold: bool = False


def chunk(
    content: str | None = None,
    *,
    reasoning: str | None = None,
    reasoning_key: str = "reasoning_content",
    tool_calls: list[dict[str, Any]] | None = None,
    finish: str | None = None,
    refusal: str | None = None,
) -> dict[str, Any]:
    """One ``chat.completion.chunk`` with a single choice."""
    delta: dict[str, Any] = {}
    if content is not None:
        delta["content"] = content
    if reasoning is not None:
        delta[reasoning_key] = reasoning
    if tool_calls is not None:
        delta["tool_calls"] = tool_calls
    if refusal is not None:
        delta["refusal"] = refusal
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "model": "fake",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def usage_chunk(prompt: int, completion: int) -> dict[str, Any]:
    """The final chunk of ``stream_options.include_usage``: no choices, only usage."""
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "choices": [],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        },
    }


def tool_reply(
    calls: list[tuple[str, str, dict[str, Any]]],
    *,
    text: str = "",
    usage: tuple[int, int] = (50, 10),
) -> Reply:
    """A reply streaming ``text`` then the tool ``calls`` ``(id, name, args)``: the id and
    name in a first fragment, the JSON arguments split across two more."""
    events: list[Any] = [chunk(text)] if text else []
    for index, (call_id, name, args) in enumerate(calls):
        encoded = json.dumps(args)
        half = len(encoded) // 2
        events.append(
            chunk(
                tool_calls=[
                    {
                        "index": index,
                        "id": call_id,
                        "type": "function",
                        "function": {"name": name, "arguments": ""},
                    }
                ]
            )
        )
        for part in (encoded[:half], encoded[half:]):
            events.append(chunk(tool_calls=[{"index": index, "function": {"arguments": part}}]))
    events += [chunk(finish="tool_calls"), usage_chunk(*usage)]
    return Reply(events=events)


def text_reply(text: str, *, finish: str = "stop", usage: tuple[int, int] = (60, 5)) -> Reply:
    """A reply streaming ``text`` word by word, then ``finish`` and usage."""
    words = [w + " " for w in text.split(" ")]
    words[-1] = words[-1].rstrip(" ")
    events: list[Any] = [chunk(w) for w in words]
    events += [chunk(finish=finish), usage_chunk(*usage)]
    return Reply(events=events)


class FakeOpenAI:
    """The server. Use :func:`serve` to run it; script with :meth:`add`."""

    def __init__(self) -> None:
        self.replies: deque[Reply] = deque()
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.disconnected = threading.Event()
        self.port = 0
        #: When set, picks each reply from the request body instead of the queue: for
        #: clients whose prompts come in no fixed order (``acp2 check``).
        self.script: Callable[[dict[str, Any]], Reply] | None = None

    @property
    def url(self) -> str:
        """The base URL to configure (``.../v1``)."""
        return f"http://127.0.0.1:{self.port}/v1"

    def add(self, *replies: Reply) -> None:
        """Queue replies, answered in order to the next requests."""
        self.replies.extend(replies)

    def next_reply(self, body: dict[str, Any] | None = None) -> Reply:
        """(server side) The next scripted reply; a 500 when the script ran out."""
        if self.script is not None and body is not None:
            return self.script(body)
        if self.replies:
            return self.replies.popleft()
        return Reply(status=500, body={"error": {"message": "the test scripted no more replies"}})


class _Handler(BaseHTTPRequestHandler):
    """Serves one request for the :class:`FakeOpenAI` in ``self.fake``."""

    fake: FakeOpenAI

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        self.fake.requests.append(body)
        self.fake.headers.append({k.lower(): v for k, v in self.headers.items()})
        if self.path != "/v1/chat/completions":
            self._json(404, {"error": {"message": f"no route {self.path}"}}, {})
            return
        reply = self.fake.next_reply(body)
        if reply.status != 200:
            self._json(reply.status, reply.body, reply.headers)
            return
        try:
            self._stream(reply)
        except (BrokenPipeError, ConnectionResetError):
            self.fake.disconnected.set()
        finally:
            self.close_connection = True

    def _json(self, status: int, body: Any, headers: dict[str, str]) -> None:
        data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _stream(self, reply: Reply) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        for event in reply.events:
            if isinstance(event, Gate):
                event.wait()
            else:
                data = event if isinstance(event, str) else json.dumps(event)
                self.wfile.write(f"data: {data}\n\n".encode())
                self.wfile.flush()
        if reply.hold:
            # The client sent its whole request: the next read returns only at its close.
            self.connection.settimeout(SERVER_WAIT)
            if self.rfile.read(1) == b"":
                self.fake.disconnected.set()
            return
        if reply.done:
            self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()


@contextmanager
def serve() -> Iterator[FakeOpenAI]:
    """Run a :class:`FakeOpenAI` on an ephemeral port of 127.0.0.1 for the block."""
    with serve_on_loopback(FakeOpenAI(), _Handler) as fake:
        yield fake

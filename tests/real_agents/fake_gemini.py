"""A fake Gemini API server: real HTTP and SSE on 127.0.0.1, for Gemini CLI.

Gemini CLI pointed at it (``GOOGLE_GEMINI_BASE_URL=<url>``, any ``GEMINI_API_KEY``) posts
``/v1beta/models/<model>:streamGenerateContent?alt=sse`` for each model turn; each such
request takes the next scripted :class:`Turn` and gets it as one SSE event per part
(``data: <GenerateContentResponse>``). A function call is a ``functionCall`` part; the
CLI runs the tool and comes back with a ``functionResponse`` in its next request.
``hold=True`` streams the parts and then keeps the response open until the client goes
away (a cancel), which sets ``disconnected``. ``:generateContent`` (the CLI's side
questions) and ``:countTokens`` get neutral answers and are recorded too.

Every request body is kept in ``requests`` (path, body), in arrival order.
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

from helpers.http_fake import send_json, serve_on_loopback

__all__ = ["FakeGemini", "Turn", "by_prompt", "call", "last_user_part", "serve", "text"]

#: Longest time the server thread keeps a held stream open.
SERVER_WAIT = 60.0


@dataclass
class Turn:
    """One scripted model turn: ``parts`` (Gemini ``Part`` objects), each sent as its own
    SSE event; ``hold`` keeps the stream open afterwards until the client disconnects."""

    parts: list[dict[str, Any]] = field(default_factory=list)
    hold: bool = False


def text(*chunks: str, hold: bool = False) -> Turn:
    """A turn streaming ``chunks`` as text parts."""
    return Turn(parts=[{"text": chunk} for chunk in chunks], hold=hold)


def call(name: str, args: dict[str, Any], *, say: str = "") -> Turn:
    """A turn that optionally says ``say``, then calls the function ``name(args)``."""
    parts: list[dict[str, Any]] = [{"text": say}] if say else []
    parts.append({"functionCall": {"name": name, "args": args}})
    return Turn(parts=parts)


def _response(parts: list[dict[str, Any]], *, last: bool) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    if last:
        candidate["finishReason"] = "STOP"
    return {
        "candidates": [candidate],
        "usageMetadata": {"promptTokenCount": 40, "candidatesTokenCount": 8, "totalTokenCount": 48},
        "modelVersion": "fake-gemini",
    }


class FakeGemini:
    """The server's state. Use :func:`serve` to run it; script with :meth:`add`."""

    def __init__(self) -> None:
        self.turns: deque[Turn] = deque()
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self.disconnected = threading.Event()
        self.port = 0
        #: When set, picks each streamed turn from the request body instead of the queue
        #: (:func:`by_prompt`): for clients whose prompts come in no fixed order.
        self.script: Callable[[dict[str, Any]], Turn] | None = None

    @property
    def url(self) -> str:
        """The base URL for ``GOOGLE_GEMINI_BASE_URL``."""
        return f"http://127.0.0.1:{self.port}"

    def add(self, *turns: Turn) -> None:
        """Queue turns, streamed in order to the next ``streamGenerateContent`` requests."""
        self.turns.extend(turns)

    def next_turn(self, body: dict[str, Any] | None = None) -> Turn:
        """(server side) The next scripted turn; past the script, a text that says so."""
        if self.script is not None and body is not None:
            return self.script(body)
        return self.turns.popleft() if self.turns else text("(the test scripted no more turns)")

    def streamed(self) -> list[dict[str, Any]]:
        """The bodies of the ``streamGenerateContent`` requests so far."""
        return [body for path, body in self.requests if ":streamGenerateContent" in path]


class _Handler(BaseHTTPRequestHandler):
    """Serves one request for the :class:`FakeGemini` in ``self.fake``."""

    fake: FakeGemini

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        self.fake.requests.append((self.path, body))
        try:
            if ":streamGenerateContent" in self.path:
                self._stream(self.fake.next_turn(body))
            elif ":countTokens" in self.path:
                self._json({"totalTokens": 40})
            elif ":generateContent" in self.path:
                self._json(_response([{"text": "{}"}], last=True))
            else:
                self.send_error(404, f"no route {self.path}")
        except (BrokenPipeError, ConnectionResetError):
            self.fake.disconnected.set()
        finally:
            self.close_connection = True

    def _json(self, body: Any) -> None:
        send_json(self, body)

    def _stream(self, turn: Turn) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        for index, part in enumerate(turn.parts):
            last = index == len(turn.parts) - 1 and not turn.hold
            event = json.dumps(_response([part], last=last))
            self.wfile.write(f"data: {event}\n\n".encode())
            self.wfile.flush()
        if turn.hold:
            # The client sent its whole request: the next read returns only at its close.
            self.connection.settimeout(SERVER_WAIT)
            if self.rfile.read(1) == b"":
                self.fake.disconnected.set()


def last_user_part(body: dict[str, Any]) -> dict[str, Any]:
    """The last part of the last ``user`` content of a request body (a text or a
    ``functionResponse``), or ``{}``."""
    users = [c for c in body.get("contents", []) if c.get("role") == "user"]
    parts = users[-1].get("parts", []) if users else []
    return parts[-1] if parts else {}


def by_prompt(body: dict[str, Any]) -> Turn:
    """A :attr:`FakeGemini.script` for prompts in any order, by the prompt's first word:
    ``wait`` streams a word and holds until cancelled, ``tools`` writes ``note.txt``
    (a tool that asks the client's permission) and then says it did, anything else is
    echoed back."""
    part = last_user_part(body)
    if "functionResponse" in part:
        return text("The tool ran.")
    prompt = str(part.get("text", "")).strip()
    if prompt.startswith("wait"):
        return text("waiting", hold=True)
    if prompt.startswith("tools"):
        return call("write_file", {"file_path": "note.txt", "content": "hello\n"})
    return text(prompt or "(empty)")


@contextmanager
def serve() -> Iterator[FakeGemini]:
    """Run a :class:`FakeGemini` on an ephemeral port of 127.0.0.1 for the block."""
    with serve_on_loopback(FakeGemini(), _Handler) as fake:
        yield fake

"""An offline OpenAI-compatible chat-completions server on 127.0.0.1, for trying
``acp2 agent --model openai`` (or any agent speaking that wire format, e.g. fast-agent's
``generic`` provider) with no account and no network::

    python -m acp2.testing.fake_openai [--port PORT] [--reply TEXT]...

It prints its base URL (``http://127.0.0.1:PORT/v1``, the value for ``OPENAI_BASE_URL``)
as the first line on stdout and serves until interrupted. Every ``POST
/v1/chat/completions`` is answered with the next ``--reply`` (cycling), or without any
with ``You said: <the last user message>``; streamed as server-sent events when the
request asks for ``stream``, else one JSON completion. It never calls a tool, checks
no API key and binds only the loopback address. The standard library only.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import sys
from collections.abc import Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["FakeOpenAI", "main", "reply_text"]

_HOST = "127.0.0.1"  # never any other address: this is a local stand-in


def reply_text(request: dict[str, Any]) -> str:
    """``You said: TEXT`` for the last user message of a chat-completions ``request``."""
    for message in reversed(request.get("messages") or []):
        if isinstance(message, dict) and message.get("role") == "user":
            return "You said: " + _content_text(message.get("content"))
    return "Hello from the fake model."


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts: keep the text ones
        return " ".join(
            str(part.get("text", "")) for part in content if isinstance(part, dict)
        ).strip()
    return ""


class FakeOpenAI(ThreadingHTTPServer):
    """The server: ``replies`` answered in turn (empty: echo); :attr:`url` is the base
    URL to configure."""

    daemon_threads = True

    def __init__(self, port: int = 0, replies: Sequence[str] = ()) -> None:
        super().__init__((_HOST, port), _Handler)
        self._replies: Iterator[str] | None = itertools.cycle(replies) if replies else None

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT/v1``."""
        return f"http://{_HOST}:{self.server_address[1]}/v1"

    def answer(self, request: dict[str, Any]) -> str:
        """The text of the reply to ``request``."""
        return next(self._replies) if self._replies is not None else reply_text(request)


class _Handler(BaseHTTPRequestHandler):
    server: FakeOpenAI

    def log_message(self, format: str, *args: Any) -> None:
        pass  # stdout carries the URL line only; requests are not logged

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        try:
            request = json.loads(self.rfile.read(length) or b"{}")
        except ValueError:
            request = None
        if not self.path.endswith("/chat/completions") or not isinstance(request, dict):
            self._send(404 if isinstance(request, dict) else 400, "application/json", b"{}")
            return
        text = self.server.answer(request)
        if request.get("stream"):
            self._send(200, "text/event-stream", _events(text))
        else:
            self._send(200, "application/json", json.dumps(_completion(text)).encode())

    def _send(self, status: int, kind: str, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def _chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "choices": [choice]}


def _usage(text: str) -> dict[str, Any]:
    words = len(text.split())
    return {"prompt_tokens": 10, "completion_tokens": words, "total_tokens": 10 + words}


def _events(text: str) -> bytes:
    """The reply as SSE: word by word, the finish, a usage chunk, ``[DONE]``."""
    words = text.split(" ")
    parts = [w + " " for w in words[:-1]] + words[-1:]
    chunks = [_chunk({"role": "assistant", "content": p}) for p in parts]
    chunks.append(_chunk({}, "stop"))
    chunks.append({"id": "chatcmpl-fake", "choices": [], "usage": _usage(text)})
    lines = [f"data: {json.dumps(c)}\n\n" for c in chunks] + ["data: [DONE]\n\n"]
    return "".join(lines).encode()


def _completion(text: str) -> dict[str, Any]:
    message = {"role": "assistant", "content": text}
    choice = {"index": 0, "message": message, "finish_reason": "stop"}
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "choices": [choice],
        "usage": _usage(text),
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Serve until interrupted (Ctrl-C, SIGTERM); print the base URL first."""
    parser = argparse.ArgumentParser(
        prog="python -m acp2.testing.fake_openai",
        description="An offline OpenAI-compatible chat-completions server on 127.0.0.1.",
    )
    parser.add_argument("--port", type=int, default=0, help="port (default: any free one)")
    parser.add_argument(
        "--reply", action="append", default=[], help="reply with TEXT (repeat: in turn)"
    )
    args = parser.parse_args(argv)
    with FakeOpenAI(args.port, args.reply) as server:
        print(server.url, flush=True)
        with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C is how it is meant to end
            server.serve_forever()
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

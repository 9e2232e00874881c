"""A fake HTTP service on 127.0.0.1 for the length of a ``with`` block (fake model
endpoints: tests/coder/fake_openai.py, tests/real_agents/fake_gemini.py)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, TypeVar

F = TypeVar("F")


@contextmanager
def serve_on_loopback(fake: F, handler: type[BaseHTTPRequestHandler]) -> Iterator[F]:
    """Serve ``handler`` (which reaches ``fake`` as ``self.fake``) on an ephemeral port of
    127.0.0.1, with ``fake.port`` set, until the block ends; every request thread is a
    daemon, so a client that hangs cannot keep the test process alive."""
    bound: type[Any] = type("Handler", (handler,), {"fake": fake})
    server = ThreadingHTTPServer(("127.0.0.1", 0), bound)
    server.daemon_threads = True
    fake.port = server.server_address[1]  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()


def send_json(handler: BaseHTTPRequestHandler, body: Any) -> None:
    """Answer ``handler``'s request with ``body`` as a 200 JSON response."""
    data = json.dumps(body).encode()
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)

"""Attack: a WebSocket client of ``acp2 serve`` that leaves mid-turn (issue 24).

Before the fix a client that prompted a long stream, read 50 frames and closed made
``acp2 serve --test-agent`` stop answering every client and grow to 1.6 GB in 7 s: the
turn's sends on the closed connection were dropped without pushing back, so the loop
never yielded to the event loop again. A client that only stopped reading did the same
once the stall timeout ended its connection. Now the turn is cancelled at its next send,
and the server goes on serving the others.

A real ``acp2 serve --test-agent`` process on 127.0.0.1, its history in a real SQLite file,
plain (non-durable) WebSocket clients -- a plain connection ends with its socket -- and a
Streamable HTTP client that ends its connection (``DELETE``).
"""

from __future__ import annotations

import json
import os
import queue
import sqlite3
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
from websockets.sync.client import connect as ws_connect

from helpers.processes import ACP2
from helpers.serve_process import listening_port
from helpers.timeouts import PROCESS_TIMEOUT, TIMEOUT

#: Far more chunks than any test reads: the turn runs until its client leaves.
ENDLESS = "stream 1000000000"
#: A leaving client sends its close frame and drops the socket without waiting for the
#: server's, which is queued behind everything it did not read.
LEAVE = {"close_timeout": 0}
#: The server's peak memory bound; it starts at ~60 MB, and the runaway turn grew it by
#: ~200 MB/s until killed.
MAX_RSS_KIB = 250 * 1024


class Server:
    """A real ``acp2 serve --test-agent`` (its WebSocket URL, pid, and a queue of the
    stderr lines after the one saying where it listens)."""

    def __init__(self, store: Path, *flags: str) -> None:
        env = dict(os.environ)
        env.pop("ACP2_TOKEN", None)
        self.process = subprocess.Popen(
            [
                *ACP2,
                "serve",
                "--no-token",
                "--test-agent",
                "--port",
                "0",
                "--store",
                str(store),
                *flags,
            ],
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        port = listening_port(self.process, [], lines=self.lines)
        self.url = f"ws://127.0.0.1:{port}/acp"
        self.pid = self.process.pid

    def wait_for_log(self, text: str) -> None:
        """Wait (within the bound) for a stderr line containing ``text``."""
        while text not in self.lines.get(timeout=PROCESS_TIMEOUT):
            pass

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(PROCESS_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


@contextmanager
def acp2_serve(store: Path, *flags: str) -> Iterator[Server]:
    """A :class:`Server`, stopped at the end."""
    server = Server(store, *flags)
    try:
        yield server
    finally:
        server.stop()


@contextmanager
def connect(url: str, **options: Any) -> Iterator[Client]:
    """A :class:`Client` on a new WebSocket to ``url``, closed at the end."""
    with ws_connect(url, open_timeout=TIMEOUT, **options) as ws:
        yield Client(ws)


class Client:
    """A raw WebSocket client: one JSON-RPC message per text frame."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws

    def send(self, rid: int, method: str, params: Any) -> None:
        self.ws.send(json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}))

    def next(self) -> Any:
        """The next message (failing the test if none comes within the bound)."""
        return json.loads(self.ws.recv(timeout=TIMEOUT))

    def answer(self, rid: int) -> Any:
        while True:
            message = self.next()
            if message.get("id") == rid:
                assert "result" in message, message
                return message["result"]

    def open_session(self, cwd: Path) -> str:
        init = {"protocolVersion": 2, "info": {"name": "c", "version": "0"}, "capabilities": {}}
        self.send(1, "initialize", init)
        self.answer(1)
        self.send(2, "session/new", {"cwd": str(cwd), "mcpServers": []})
        session_id: str = self.answer(2)["sessionId"]
        return session_id

    def prompt(self, rid: int, session_id: str, text: str) -> None:
        prompt = [{"type": "text", "text": text}]
        self.send(rid, "session/prompt", {"sessionId": session_id, "prompt": prompt})

    def run_turn(self, rid: int, session_id: str, text: str) -> str:
        """Prompt and wait for the work's idle; return its stop reason."""
        self.prompt(rid, session_id, text)
        self.answer(rid)
        while True:
            update = self.next().get("params", {}).get("update", {})
            if update.get("sessionUpdate") == "state_update" and update.get("state") == "idle":
                reason: str = update["stopReason"]
                return reason


def stored_updates(store: Path, session_id: str) -> int:
    """How many updates of the session are in history (a row holds one flush's updates)."""
    with sqlite3.connect(store) as db:
        rows = db.execute("SELECT body FROM updates WHERE session_id = ?", (session_id,))
        return sum(bytes(body).count(b"\n") + 1 for (body,) in rows)


def peak_rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    raise AssertionError("no VmHWM in /proc")


def assert_the_server_serves_others_and_the_turn_ended(
    server: Server, store: Path, left: str, cwd: Path
) -> None:
    with connect(server.url) as other:
        session_id = other.open_session(cwd)
        assert other.run_turn(3, session_id, "stream 10") == "end_turn"
        # The left turn ended: its history no longer grows across a whole round trip.
        before = stored_updates(store, left)
        assert other.run_turn(4, session_id, "stream 10") == "end_turn"
        assert stored_updates(store, left) == before
    assert peak_rss_kib(server.pid) < MAX_RSS_KIB


def test_a_websocket_client_that_closes_mid_stream_gets_its_turn_cancelled(
    tmp_path: Path,
) -> None:
    store = tmp_path / "history.db"
    with acp2_serve(store) as server:
        with connect(server.url, **LEAVE) as leaver:
            left = leaver.open_session(tmp_path)
            leaver.prompt(3, left, ENDLESS)
            for _ in range(50):
                leaver.next()
        # ... and it closed its socket cleanly, mid-stream.
        assert_the_server_serves_others_and_the_turn_ended(server, store, left, tmp_path)
        assert stored_updates(store, left) >= 50  # what it streamed before is kept


def test_a_websocket_client_that_stops_reading_is_cut_and_its_turn_cancelled(
    tmp_path: Path,
) -> None:
    store = tmp_path / "history.db"
    # A small receive queue: the client library stops reading the socket at once.
    with (
        acp2_serve(store, "--stall-timeout", "0.5") as server,
        connect(server.url, max_queue=4, **LEAVE) as sleeper,
    ):
        left = sleeper.open_session(tmp_path)
        sleeper.prompt(3, left, ENDLESS)
        # It reads nothing more and keeps its socket open: only the server's stall
        # timeout ends this connection, once the 16 MiB it holds for it are full.
        server.wait_for_log("took none of its output")
        assert_the_server_serves_others_and_the_turn_ended(server, store, left, tmp_path)


class SseLines:
    """The ``data:`` events of one open SSE response, as JSON."""

    def __init__(self, response: httpx.Response) -> None:
        self._lines = response.iter_lines()

    def next(self) -> Any:
        for line in self._lines:
            if line.startswith("data:"):
                return json.loads(line[5:])
        raise EOFError("the stream ended")

    def answer(self, rid: int) -> Any:
        while (message := self.next()).get("id") != rid:
            pass
        return message["result"]


def test_an_http_client_that_ends_its_connection_mid_stream_gets_its_turn_cancelled(
    tmp_path: Path,
) -> None:
    store = tmp_path / "history.db"
    with acp2_serve(store) as server, httpx.Client(timeout=TIMEOUT) as http:
        url = "http" + server.url[2:]
        init = {"protocolVersion": 2, "info": {"name": "c", "version": "0"}, "capabilities": {}}
        response = http.post(url, json=request(1, "initialize", init))
        headers = {"acp-connection-id": response.headers["acp-connection-id"]}
        stream = {**headers, "accept": "text/event-stream"}
        with http.stream("GET", url, headers=stream) as connection_stream:
            new = request(2, "session/new", {"cwd": str(tmp_path), "mcpServers": []})
            assert http.post(url, json=new, headers=headers).status_code == 202
            left = SseLines(connection_stream).answer(2)["sessionId"]
            session_stream = {**stream, "acp-session-id": left}
            with http.stream("GET", url, headers=session_stream) as updates:
                prompt = {"sessionId": left, "prompt": [{"type": "text", "text": ENDLESS}]}
                on_session = {**headers, "acp-session-id": left}
                posted = http.post(
                    url, json=request(3, "session/prompt", prompt), headers=on_session
                )
                assert posted.status_code == 202
                events = SseLines(updates)
                for _ in range(50):
                    events.next()
                assert http.delete(url, headers=headers).status_code < 300  # it leaves
        assert_the_server_serves_others_and_the_turn_ended(server, store, left, tmp_path)


def request(rid: int, method: str, params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}

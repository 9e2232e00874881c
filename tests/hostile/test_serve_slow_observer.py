"""Attack: an observer attached to a session stops reading (issue 24, item 6).

Before the fix the session's output waited for its slowest client: an observer that
stopped reading stopped the owner's stream (0 chunks for ~40 s, until the observer was
cut at the 60 s stall timeout), and it could attach again at once. Now only the client
driving the turn slows the output down; any other client has a bounded buffer (its
connection's high-water mark of unwritten output) and is dropped when it overflows:
its connection closes with a logged reason, and the owner's stream never stops.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from websockets.exceptions import ConnectionClosed

from helpers.timeouts import SCENARIO_TIMEOUT, TIMEOUT
from hostile.serve_limits_helpers import CWD, call, initialize, served, ws_connect

pytestmark = pytest.mark.slow

#: Chunks in the owner's turn: ~12 MB, more than an observer may leave unread.
CHUNKS = 100_000
#: The server's stall timeout: the owner must have its whole turn long before it.
STALL = "120"


def _open(url: str, **options: Any) -> Any:
    ws = ws_connect(url, **options)
    assert "result" in call(ws, 0, "initialize", initialize()["params"])
    return ws


def _read_turn(ws: Any) -> tuple[int, dict[str, Any]]:
    """Read the owner's turn until the session is idle; return the chunks seen and the
    idle update."""
    chunks = 0
    while True:
        message = json.loads(ws.recv(timeout=TIMEOUT))
        update = message.get("params", {}).get("update", {})
        kind = update.get("sessionUpdate")
        chunks += kind == "agent_message_chunk"
        if kind == "state_update" and update.get("state") == "idle":
            return chunks, update


def _read_to_close(ws: Any) -> tuple[int, Any]:
    """Read what the dropped observer was sent until its socket closes; return how many
    messages and the server's close frame."""
    seen = 0
    try:
        while True:
            ws.recv(timeout=TIMEOUT)
            seen += 1
    except ConnectionClosed as closed:
        return seen, closed.rcvd


def test_an_observer_that_stops_reading_does_not_stop_the_owners_stream_and_is_dropped(
    tmp_path: Path,
) -> None:
    flags = ("--stall-timeout", STALL, "--max-held-bytes", "65536")
    with served(tmp_path, *flags) as server, _open(server.ws_url) as owner:
        session = call(owner, 1, "session/new", {"cwd": CWD, "mcpServers": []})
        session_id = session["result"]["sessionId"]
        with _open(server.ws_url, rcvbuf=4096, max_queue=1) as observer:
            attached = call(
                observer, 1, "_acp2/session/attach", {"sessionId": session_id, "role": "observer"}
            )
            assert attached["result"]["role"] == "observer"
            # From here on the observer reads nothing while the owner's turn runs.
            start = time.monotonic()
            text = {"type": "text", "text": f"stream {CHUNKS}"}
            prompt = {"sessionId": session_id, "prompt": [text]}
            owner.send(
                json.dumps(
                    {"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": prompt}
                )
            )
            chunks, idle = _read_turn(owner)
            took = time.monotonic() - start
            assert idle.get("stopReason") == "end_turn", idle
            assert chunks == CHUNKS
            assert took < SCENARIO_TIMEOUT
            seen, close = _read_to_close(observer)
            assert seen < CHUNKS
            assert close is not None
            assert (close.code, "too slow" in close.reason) == (1008, True), close
        assert any("too slow" in line for line in server.lines), server.lines[-5:]

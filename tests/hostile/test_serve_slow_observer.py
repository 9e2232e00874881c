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
#: The server's stall timeout (the owner must have its whole turn long before it), and
#: a small hold per connection so a client that stops reading is behind soon.
FLAGS = ("--stall-timeout", "120", "--max-held-bytes", "65536")


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


def _attach(ws: Any, session_id: str, role: str) -> None:
    attached = call(ws, 1, "_acp2/session/attach", {"sessionId": session_id, "role": role})
    assert attached["result"]["role"] == role


def _driven_turn(driver: Any, session_id: str) -> None:
    """``driver`` prompts and reads its whole turn within the bound."""
    start = time.monotonic()
    prompt = {"sessionId": session_id, "prompt": [{"type": "text", "text": f"stream {CHUNKS}"}]}
    driver.send(
        json.dumps({"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": prompt})
    )
    chunks, idle = _read_turn(driver)
    assert idle.get("stopReason") == "end_turn", idle
    assert chunks == CHUNKS
    assert time.monotonic() - start < SCENARIO_TIMEOUT


def _assert_dropped(slow: Any, lines: list[str]) -> None:
    """``slow`` got part of the turn, then a close saying it was too slow (logged too)."""
    seen, close = _read_to_close(slow)
    assert seen < CHUNKS
    assert close is not None
    assert (close.code, "too slow" in close.reason) == (1008, True), close
    assert any("too slow" in line for line in lines), lines[-5:]


def _new_session(ws: Any) -> str:
    session_id: str = call(ws, 1, "session/new", {"cwd": CWD, "mcpServers": []})["result"][
        "sessionId"
    ]
    return session_id


def test_an_observer_that_stops_reading_does_not_stop_the_owners_stream_and_is_dropped(
    tmp_path: Path,
) -> None:
    with served(tmp_path, *FLAGS) as server, _open(server.ws_url) as owner:
        session_id = _new_session(owner)
        with _open(server.ws_url, rcvbuf=4096, max_queue=1) as observer:
            _attach(observer, session_id, "observer")
            # From here on the observer reads nothing while the owner's turn runs.
            _driven_turn(owner, session_id)
            _assert_dropped(observer, server.lines)


def test_an_owner_that_stops_reading_does_not_stop_the_turn_another_controller_drives(
    tmp_path: Path,
) -> None:
    with (
        served(tmp_path, *FLAGS) as server,
        _open(server.ws_url, rcvbuf=4096, max_queue=1) as owner,
    ):
        session_id = _new_session(owner)
        with _open(server.ws_url) as controller:
            _attach(controller, session_id, "controller")
            # The owner reads nothing from here on; the controller's turn must flow.
            _driven_turn(controller, session_id)
            _assert_dropped(owner, server.lines)

"""Attack: a client that leaves an agent mid-turn -- closes stdin or dies (issue 24).

Before the fix a handler looping ``await turn.say(...)`` ran on at full speed once its
client was gone: a send on the closed connection was dropped without a word, nothing
pushed back, so the loop never reached an await that could deliver the cancellation
queued for it, and every chunk's history row waited for a write that never came (+108
MB/s; the agent never exited). Now the first send that finds the connection closed
cancels the work: the handler sees ``CancelledError`` at that ``say``, the work ends
``idle`` / ``cancelled``, what it produced is committed to history, and the agent exits.

The agent is a real subprocess (``disconnect_agent.py``) with its history in a real
SQLite file; it reports its handler's cancellation on stderr. A client that only stops
reading is in ``test_remote_client_disconnect_mid_turn.py``: over stdio it holds the
agent at the high-water mark (4 MiB queued, the handler waiting in ``say``), with nothing
to cut unless the client also sends more than ``max_unread`` of requests
(``test_unread_peer.py``).
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

from helpers.timeouts import PROCESS_TIMEOUT

AGENT = [sys.executable, str(Path(__file__).with_name("disconnect_agent.py"))]
INIT = {"protocolVersion": 2, "info": {"name": "leaver", "version": "0"}, "capabilities": {}}
#: Frames the client reads before it leaves: the turn is well under way.
READ_BEFORE_LEAVING = 50
#: The agent's peak memory bound; start-up is ~40 MB, and the runaway loop grew by
#: ~100 MB/s until killed.
MAX_RSS_KIB = 150 * 1024
#: A handler cancelled at its next ``say`` after the close adds at most the chunks already
#: queued in the pipe: far fewer than a runaway loop makes in the seconds a test waits.
MAX_UPDATES = 200_000


def start(store: Path) -> subprocess.Popen[bytes]:
    """The agent, with pipes on all three streams."""
    return subprocess.Popen(
        [*AGENT, str(store)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def send(proc: subprocess.Popen[bytes], rid: int, method: str, params: Any) -> None:
    assert proc.stdin is not None
    message = {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}
    proc.stdin.write(json.dumps(message).encode() + b"\n")
    proc.stdin.flush()


def answer(proc: subprocess.Popen[bytes], rid: int) -> Any:
    """The result of request ``rid``, skipping the notifications before it."""
    assert proc.stdout is not None
    while True:
        line = proc.stdout.readline()
        assert line, "the agent closed its output"
        message = json.loads(line)
        if message.get("id") == rid:
            return message["result"]


def prompt_forever(proc: subprocess.Popen[bytes], tmp_path: Path) -> str:
    """Open a session and start the endless turn; return the session id."""
    send(proc, 1, "initialize", INIT)
    answer(proc, 1)
    send(proc, 2, "session/new", {"cwd": str(tmp_path), "mcpServers": []})
    session_id: str = answer(proc, 2)["sessionId"]
    text = [{"type": "text", "text": "go"}]
    send(proc, 3, "session/prompt", {"sessionId": session_id, "prompt": text})
    answer(proc, 3)
    return session_id


def read_frames(proc: subprocess.Popen[bytes], count: int) -> None:
    assert proc.stdout is not None
    for _ in range(count):
        assert proc.stdout.readline()


def finish(proc: subprocess.Popen[bytes]) -> str:
    """Wait for the agent to exit on its own (a runaway one never does: the wait fails);
    return its stderr."""
    try:
        proc.wait(PROCESS_TIMEOUT)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise AssertionError("the agent kept running after its client left") from None
    assert proc.stderr is not None
    return proc.stderr.read().decode()


def peak_rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    raise AssertionError("no VmHWM in /proc")


def stored_updates(store: Path, session_id: str) -> int:
    """How many updates of the session are in history (a row holds one flush's updates,
    one line each)."""
    with sqlite3.connect(store) as db:
        rows = db.execute("SELECT body FROM updates WHERE session_id = ?", (session_id,))
        return sum(bytes(body).count(b"\n") + 1 for (body,) in rows)


def test_a_client_that_closes_stdin_mid_turn_gets_the_handler_cancelled_and_the_agent_exits(
    tmp_path: Path,
) -> None:
    store = tmp_path / "history.db"
    proc = start(store)
    session_id = prompt_forever(proc, tmp_path)
    read_frames(proc, READ_BEFORE_LEAVING)
    assert proc.stdin is not None
    proc.stdin.close()
    peak = peak_rss_kib(proc.pid)
    assert proc.stdout is not None
    proc.stdout.close()  # then the client dies
    stderr = finish(proc)
    assert "handler cancelled after" in stderr, stderr
    assert peak < MAX_RSS_KIB
    # What the turn produced before the close is in history (the user message and the
    # chunks), committed though no write followed it.
    assert 1 + READ_BEFORE_LEAVING <= stored_updates(store, session_id) < MAX_UPDATES


def test_a_client_that_dies_mid_turn_gets_the_handler_cancelled(tmp_path: Path) -> None:
    # The client's end of our output goes away first (writes fail), its input stays open.
    proc = start(tmp_path / "history.db")
    prompt_forever(proc, tmp_path)
    read_frames(proc, READ_BEFORE_LEAVING)
    assert proc.stdout is not None
    proc.stdout.close()
    stderr = finish(proc)
    assert "handler cancelled after" in stderr, stderr

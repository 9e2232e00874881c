"""Attack: a peer that sends requests and never reads the answers (issue 10, section 4).

Before the fix 200,000 unread ``session/list`` requests drove the agent from 31 MB to
1,648 MB (914 MB measured here with 40 sessions listed, after 60 s): answers are never
held back, so they piled up. Now the connection stops reading while more than
``max_unread`` (16 MiB) of its output is unread, answers everything once the peer reads,
and closes with a logged reason when the peer takes nothing for ``stall_timeout``.
The figures for the real ``acp2 test-agent`` are measured by ``bench/hostile_memory.py``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest

PEER = [sys.executable, str(Path(__file__).with_name("unread_peer_agent.py"))]
REQUESTS = 4000  # x 64 KiB answers: 250 MiB if nothing held the peer back (230 MB RSS at 3000)
RSS_BOUND_KIB = 200 * 1024


def peak_rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    raise AssertionError("no VmHWM in /proc")


def flood(proc: subprocess.Popen[bytes]) -> threading.Thread:
    """Write every request from a thread (it blocks once the peer stops reading)."""
    data = b"".join(
        b'{"jsonrpc":"2.0","id":%d,"method":"big","params":{}}\n' % i for i in range(REQUESTS)
    )

    def write() -> None:
        assert proc.stdin is not None
        try:
            proc.stdin.write(data)
            proc.stdin.flush()
        except OSError:  # the peer closed the connection
            pass

    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    return thread


def unread_for(proc: subprocess.Popen[bytes], seconds: float) -> None:
    """Let the peer work while nobody reads its output; it must not exit meanwhile."""
    with pytest.raises(subprocess.TimeoutExpired):
        proc.wait(seconds)


@pytest.mark.slow
def test_a_peer_that_does_not_read_is_held_back_then_answered_in_full() -> None:
    proc = subprocess.Popen([*PEER, "60"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        writer = flood(proc)
        unread_for(proc, 2.0)
        assert peak_rss_kib(proc.pid) < RSS_BOUND_KIB
        assert writer.is_alive()  # the peer stopped reading: our writes are blocked
        assert proc.stdout is not None
        ids = [json.loads(proc.stdout.readline())["id"] for _ in range(REQUESTS)]
        assert ids == list(range(REQUESTS))  # once read, everything is answered in order
        writer.join(10)
        assert peak_rss_kib(proc.pid) < RSS_BOUND_KIB
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        assert proc.wait(20) == 0


def test_a_peer_that_never_reads_is_disconnected_after_the_stall_timeout() -> None:
    proc = subprocess.Popen(
        [*PEER, "0.5"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    writer = flood(proc)
    try:
        assert proc.wait(30) == 0  # it gave up on us, cleanly
    finally:
        writer.join(10)
    assert proc.stderr is not None
    text = proc.stderr.read().decode()
    assert "closing the connection: the peer left" in text
    assert "close_reason: the peer left" in text

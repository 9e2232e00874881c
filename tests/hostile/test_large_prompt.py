"""Attack: one very large message (issue 10, section 4, third bullet).

A 60 MiB message used to cost the JSON-RPC layer 3x its size at peak (its 64 KiB chunks,
their join, then the decoded string; the freed chunks stayed in the heap) and an echo
of it two more copies (join with the newline, the unwritten rest). Now a long line is
gathered in one buffer that is freed once complete, and a big frame is written as it is,
so the layer peaks at about 2x: decoded string plus the line it came from. Measured on
a real subprocess from ``/proc`` (``VmHWM`` after a reset).

End to end, ``acp2 test-agent`` with its history in a SQLite file used to peak at 6x for a
60 MiB prompt: the user message encoded twice (history row, then frame), the frame
joined with the frames queued before it, and SQLite copying the bound blob. Now the
message is encoded once into its frame, the history row is a view of it written in
place by incremental blob I/O, and a big frame is never joined: about 2x (the decoded
prompt and its frame). More figures in ``bench/hostile_memory.py``.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from subprocess import PIPE
from typing import IO, Any

import anyio
import anyio.lowlevel
import pytest

from acp2.rpc.outbox import WRITE_PIECE, Outbox

PEER = [sys.executable, str(Path(__file__).with_name("large_message_peer.py"))]
AGENT = [sys.executable, "-m", "acp2", "test-agent"]
SIZE = 60 * 1024 * 1024
BOUND = 2.6  # measured 2.0 (3.0 before); generous for allocator noise
AGENT_BOUND = 2.6  # end to end, history in a file: measured 2.0 (6.0 before)


def status_kib(pid: int, field: str) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise AssertionError(f"no {field} in /proc")


def reset_peak(pid: int) -> None:
    try:
        with open(f"/proc/{pid}/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pytest.skip("cannot reset the peak RSS of a process here")


def amplification(method: str) -> tuple[float, bytes]:
    """Send one ``SIZE``-byte request to a fresh peer; return (peak growth / size, answer)."""
    proc = subprocess.Popen(PEER, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdin is not None
    assert proc.stdout is not None
    try:
        proc.stdin.write(b'{"jsonrpc":"2.0","id":0,"method":"measure","params":{"text":"w"}}\n')
        proc.stdin.flush()
        assert json.loads(proc.stdout.readline())["result"] == 1
        line = b'{"jsonrpc":"2.0","id":1,"method":"%s","params":{"text":"%s"}}\n' % (
            method.encode(),
            b"x" * (SIZE - 60),
        )
        base = status_kib(proc.pid, "VmRSS")
        reset_peak(proc.pid)
        proc.stdin.write(line)
        proc.stdin.flush()
        del line
        answer = proc.stdout.readline()
        growth = (status_kib(proc.pid, "VmHWM") - base) * 1024
    finally:
        proc.stdin.close()
        proc.wait(20)
    return growth / SIZE, answer


@pytest.mark.slow
def test_a_60_mib_request_costs_the_rpc_layer_about_twice_its_size() -> None:
    ratio, answer = amplification("measure")
    assert json.loads(answer)["result"] == SIZE - 60
    assert ratio < BOUND


@pytest.mark.slow
def test_a_60_mib_answer_is_written_without_extra_copies() -> None:
    ratio, answer = amplification("echo")
    assert len(answer) > SIZE - 100
    assert ratio < BOUND


def send(stdin: IO[bytes], message: dict[str, Any]) -> None:
    stdin.write(json.dumps(message).encode() + b"\n")
    stdin.flush()


def answer(stdout: IO[bytes], rid: str) -> dict[str, Any]:
    while True:
        line = stdout.readline()
        assert line, f"the agent closed its output before answering {rid}"
        message: dict[str, Any] = json.loads(line)
        if message.get("id") == rid:
            return message


def open_session(proc: subprocess.Popen[bytes]) -> str:
    """Initialize ``acp2 test-agent`` and open one session; return its id."""
    assert proc.stdin is not None
    assert proc.stdout is not None
    info = {"name": "t", "version": "0"}
    init = {"protocolVersion": 2, "capabilities": {}, "info": info}
    send(proc.stdin, {"jsonrpc": "2.0", "id": "i", "method": "initialize", "params": init})
    answer(proc.stdout, "i")
    new = {"cwd": "/tmp", "mcpServers": []}
    send(proc.stdin, {"jsonrpc": "2.0", "id": "n", "method": "session/new", "params": new})
    return str(answer(proc.stdout, "n")["result"]["sessionId"])


def prompt_line(session_id: str, block: str = "resource") -> bytes:
    """A ``SIZE``-byte prompt: a scenario word, then the text in a ``block`` block
    (``resource`` or ``text``)."""
    big: dict[str, object] = {"type": "text", "text": "x" * SIZE}
    if block == "resource":
        big = {"type": "resource", "resource": {"uri": "file:///big.txt", "text": "x" * SIZE}}
    prompt = [{"type": "text", "text": "stop end_turn"}, big]
    params = {"sessionId": session_id, "prompt": prompt}
    request = {"jsonrpc": "2.0", "id": "p", "method": "session/prompt", "params": params}
    return json.dumps(request).encode() + b"\n"


def prompt_amplification(store: Path, block: str = "resource") -> tuple[float, list[bytes]]:
    """Send one ``SIZE`` prompt to ``acp2 test-agent --store store``; return (peak growth /
    size, the stored rows of the session)."""
    proc = subprocess.Popen([*AGENT, "--store", str(store)], stdin=PIPE, stdout=PIPE)
    assert proc.stdin is not None
    assert proc.stdout is not None
    try:
        session_id = open_session(proc)
        line = prompt_line(session_id, block)
        base = status_kib(proc.pid, "VmRSS")
        reset_peak(proc.pid)
        proc.stdin.write(line)
        proc.stdin.flush()
        del line
        while b'"idle"' not in proc.stdout.readline():
            pass
        growth = (status_kib(proc.pid, "VmHWM") - base) * 1024
    finally:
        proc.stdin.close()
        proc.wait(20)
    db = sqlite3.connect(store)
    rows = [bytes(r[0]) for r in db.execute("SELECT body FROM updates ORDER BY seq")]
    db.close()
    return growth / SIZE, rows


@pytest.mark.slow
def test_a_60_mib_prompt_costs_the_agent_about_twice_its_size_with_history_in_a_file(
    tmp_path: Path,
) -> None:
    ratio, rows = prompt_amplification(tmp_path / "h.sqlite3")
    updates = [json.loads(body) for row in rows for body in row.split(b"\n")]
    kinds = [u["sessionUpdate"] for u in updates]
    assert kinds.count("user_message") == 1
    user_message = updates[kinds.index("user_message")]
    assert len(user_message["content"][1]["resource"]["text"]) == SIZE
    assert ratio < AGENT_BOUND


class _Pipe:
    """A transport that takes every write at once (as a drained pipe) and keeps them."""

    def __init__(self) -> None:
        self.writes: list[bytes] = []

    def send_nowait(self, data: bytes) -> int:
        self.writes.append(data)
        return len(data)

    async def send(self, data: bytes) -> None:
        self.writes.append(data)

    async def receive(self) -> bytes:
        await anyio.sleep_forever()
        return b""

    async def aclose(self) -> None:
        """Nothing to close."""


@pytest.mark.anyio
async def test_a_big_frame_queued_behind_small_ones_is_written_as_it_is_and_in_order() -> None:
    pipe = _Pipe()
    outbox = Outbox(pipe, on_broken=lambda: None)  # type: ignore[arg-type]
    big = b"b" * (WRITE_PIECE + 1)
    frames = [b"one", big, b"two", big, b"three"]
    for frame in frames:
        outbox.put(frame)
    outbox.write_queued()
    await anyio.lowlevel.checkpoint()
    assert b"".join(pipe.writes) == b"\n".join(frames) + b"\n"
    assert sum(1 for write in pipe.writes if write is big) == 2  # never copied into a chunk


@pytest.mark.slow
def test_a_60_mib_text_block_costs_the_test_agent_no_more_than_a_resource_block(
    tmp_path: Path,
) -> None:
    """The test agent's scenario reads its word from the first text block, so a large
    text block after it is not joined, split or echoed as a stop reason."""
    ratio, _ = prompt_amplification(tmp_path / "h.sqlite3", "text")
    assert ratio < AGENT_BOUND

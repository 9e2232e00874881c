"""Attack: one very large message (issue 10, section 4, third bullet).

A 60 MiB message used to cost the JSON-RPC layer 3x its size at peak (its 64 KiB chunks,
their join, then the decoded string; the freed chunks stayed in the heap) and an echo
of it two more copies (join with the newline, the unwritten rest). Now a long line is
gathered in one buffer that is freed once complete, and a big frame is written as it is,
so the layer peaks at about 2x: decoded string plus the line it came from. Measured on
a real subprocess from ``/proc`` (``VmHWM`` after a reset); the end-to-end figures for
``acp2 test-agent``, history store included, are in ``bench/hostile_memory.py``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

PEER = [sys.executable, str(Path(__file__).with_name("large_message_peer.py"))]
SIZE = 60 * 1024 * 1024
BOUND = 2.6  # measured 2.0 (3.0 before); generous for allocator noise


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

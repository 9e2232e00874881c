"""A flooding agent against a slow consumer (issue 10, section 4): the client's memory
follows the session's state, not the number of updates.

The agent is a real subprocess (``flooding_agent.py``) writing 200 000-300 000 tiny
updates as fast as the pipe takes them. Before the fix the client kept every update
object twice (the work's log, and one content block per chunk in the state): ~230 bytes
per chunk. Measured before / after: text flood 69 / 5.5 MB of growth, interleaved flood
16 / 1.5 MB, ``acp2 run`` peak 104 / 40 MB, ``acp2 chat --plain`` 106 / 42 MB.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp2.client import connect
from acp2.client.work import MAX_ENTRIES, Skipped
from acp2.schema import AgentMessageChunk, StateUpdate
from helpers.processes import ACP2
from helpers.timeouts import TIMEOUT as ONE_WAIT

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

AGENT = [sys.executable, str(Path(__file__).with_name("flooding_agent.py"))]
CHUNKS = 300_000
ROUNDS = 50_000
#: Generous: the text of CHUNKS chunks is 2.6 MB; one object per chunk costs ~69 MB.
MAX_GROWTH_MB = 30
#: The interleaved flood keeps MAX_ENTRIES entries and the state (~1.5 MB; before: 16).
MAX_MIXED_GROWTH_MB = 8
#: Peak RSS of a whole ``acp2 run`` / ``acp2 chat`` process (start-up is ~30-35 MB).
MAX_PROCESS_MB = 80
#: Millions of updates through whole processes take minutes on a loaded two-core
#: machine, so this file allows eighteen single-wait bounds.
TIMEOUT = 18 * ONE_WAIT


def rss_mb(pid: int | str = "self", field: str = "VmRSS") -> float:
    """``field`` of ``/proc/<pid>/status`` in MB (0 once the process is gone)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0.0
    for line in status.splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return 0.0  # pragma: no cover - every Linux status file has the field


def text_of(count: int) -> str:
    return "".join(f"tok{i} " for i in range(count))


def idles(items: list[Any]) -> int:
    return sum(1 for u in items if isinstance(u, StateUpdate) and u.state == "idle")


async def test_a_consumer_that_reads_nothing_during_a_text_flood_keeps_only_the_text() -> None:
    """Half a million chunks of one message while nobody iterates: RSS grows by the text's
    size, not per chunk; iterating afterwards yields a few merged chunks whose text is the
    exact message, and exactly one idle."""
    with anyio.fail_after(TIMEOUT):
        async with connect(AGENT) as client:
            session = await client.new_session("/tmp")
            before = rss_mb()
            work = await session.prompt(f"text {CHUNKS}")
            assert await work.wait() == "end_turn"
            growth = rss_mb() - before
            items = [u async for u in work]
            assert growth < MAX_GROWTH_MB, f"client RSS grew {growth:.0f} MB"
            expected = text_of(CHUNKS)
            assert session.state.agent_text() == expected == work.text
            chunks = [u.content.text for u in items if isinstance(u, AgentMessageChunk)]
            assert "".join(chunks) == expected
            assert len(items) < 10
            assert idles(items) == 1
            assert items[-1].state == "idle"


async def test_a_slow_consumer_gets_merged_chunks_that_add_up_to_the_exact_text() -> None:
    """A consumer that sleeps on every item sees fewer, bigger chunks; their text is the
    message, memory stays bounded, one idle ends the iteration."""
    with anyio.fail_after(TIMEOUT):
        async with connect(AGENT) as client:
            session = await client.new_session("/tmp")
            before = rss_mb()
            work = await session.prompt(f"text {CHUNKS}")
            texts: list[str] = []
            items = 0
            async for update in work:
                items += 1
                if isinstance(update, AgentMessageChunk):
                    texts.append(update.content.text)
                await anyio.sleep(0.002)
            growth = rss_mb() - before
            assert growth < MAX_GROWTH_MB, f"client RSS grew {growth:.0f} MB"
            assert "".join(texts) == text_of(CHUNKS) == session.state.agent_text()
            assert items < CHUNKS // 10
            assert idles([u async for u in work]) == 1


async def test_an_interleaved_flood_that_cannot_coalesce_is_bounded_by_a_skipped_marker() -> None:
    """Four kinds interleaved defeat merging: the work keeps at most MAX_ENTRIES entries and
    a late consumer gets a Skipped marker; the state still holds every update exactly."""
    with anyio.fail_after(TIMEOUT):
        async with connect(AGENT) as client:
            session = await client.new_session("/tmp")
            before = rss_mb()
            work = await session.prompt(f"mixed {ROUNDS}")
            assert await work.wait() == "end_turn"
            growth = rss_mb() - before
            items = [u async for u in work]
            assert growth < MAX_MIXED_GROWTH_MB, f"client RSS grew {growth:.0f} MB"
            assert len(items) <= MAX_ENTRIES + 1
            assert isinstance(items[0], Skipped)
            assert items[0].count > ROUNDS
            assert idles(items) == 1
            assert items[-1].state == "idle"
            state = session.state
            numbers = "".join(f"{i} " for i in range(ROUNDS))
            assert state.messages[("agent", "m1")].text == numbers
            assert state.messages[("thought", "th1")].text == numbers
            assert state.tool_calls["c1"].title == f"step {ROUNDS - 1}"
            output = "".join(f"{i}\n" for i in range(ROUNDS)).encode()
            assert bytes(state.terminals["t1"].output) == output


class PeakSampler(threading.Thread):
    """Samples a process's peak RSS (VmHWM) until it exits."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        super().__init__(daemon=True)
        self.proc = proc
        self.peak = 0.0

    def run(self) -> None:
        while self.proc.poll() is None:
            self.peak = max(self.peak, rss_mb(self.proc.pid, "VmHWM"))
            threading.Event().wait(0.01)


def run_flooded(argv: list[str], stdin: bytes | None) -> tuple[bytes, float, int]:
    """Run a CLI against the flooding agent; its stdout pipe is read only after a pause
    (a slow reader). Return (stdout, peak RSS in MB, exit status)."""
    proc = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    sampler = PeakSampler(proc)
    sampler.start()
    assert proc.stdin is not None
    assert proc.stdout is not None
    proc.stdin.write(stdin or b"")
    proc.stdin.close()
    threading.Event().wait(0.5)  # the slow reader: nothing is read meanwhile
    out = proc.stdout.read()
    status = proc.wait(timeout=TIMEOUT)
    sampler.join(timeout=TIMEOUT)
    return out, sampler.peak, status


def test_acp2_run_against_a_text_flood_stays_bounded_and_prints_the_exact_text() -> None:
    out, peak, status = run_flooded([*ACP2, "run", f"text {CHUNKS}", "--", *AGENT], None)
    assert status == 0
    assert out.decode() == text_of(CHUNKS) + "\n"
    assert 0 < peak < MAX_PROCESS_MB, f"acp2 run peaked at {peak:.0f} MB"


def test_acp2_chat_plain_against_a_text_flood_stays_bounded_and_shows_the_text() -> None:
    argv = [*ACP2, "chat", "--plain", "--permission", "deny", "--", *AGENT]
    out, peak, status = run_flooded(argv, f"text {CHUNKS}\n".encode())
    assert status == 0
    assert text_of(CHUNKS).strip().encode() in out
    assert out.rstrip().endswith(b"[stop: end_turn]")
    assert 0 < peak < MAX_PROCESS_MB, f"acp2 chat peaked at {peak:.0f} MB"

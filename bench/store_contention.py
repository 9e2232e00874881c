"""Two agent processes on one history file (issue 10, section 7): are updates lost?

Two ``acp2 test-agent --store FILE`` processes share one SQLite file, as two editors
running ``acp2 agent`` share the per-user default file.

* ``--mode same``: process A creates a session, process B resumes the same session, and
  they take turns prompting it (``--turns`` each). Before the fix B's resume succeeded and
  turns were lost from history; now B's resume is refused while A holds the session.
* ``--mode separate``: A and B each stream into their own session at the same time.

Prints one JSON object: updates the clients received that belong in history
(``expected``), update bodies stored (``stored``), ``lost`` and ``refused`` (B's resume
error, if any).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import anyio

CWD = "/tmp"


def _argv(store: Path) -> list[str]:
    return [sys.executable, "-m", "acp2", "test-agent", "--store", str(store)]


def _counter(counts: dict[str, int], key: str) -> Any:
    from acp2.schema import StateUpdate

    def listener(update: Any, raw: bytes) -> None:
        if not isinstance(update, StateUpdate):
            counts[key] = counts.get(key, 0) + 1

    return listener


async def _turn(session: Any, text: str) -> None:
    work = await session.prompt(text)
    await work.wait()


async def same(store: Path, turns: int, counts: dict[str, int]) -> str | None:
    """A and B alternate turns on one session; return B's refusal, if any."""
    from acp2.client import connect
    from acp2.errors import RequestError

    async with connect(_argv(store)) as a, connect(_argv(store)) as b:
        sa = await a.new_session(CWD, on_update=_counter(counts, "a"))
        await _turn(sa, "echo first turn")
        try:
            sb = await b.resume(sa.id, cwd=CWD, on_update=_counter(counts, "b"))
        except RequestError as exc:
            for i in range(2 * turns):
                await _turn(sa, f"echo a turn {i}")
            return f"{exc.code}: {exc.message}"
        for i in range(turns):
            await _turn(sa, f"echo a turn {i}")
            await _turn(sb, f"echo b turn {i}")
    return None


async def separate(store: Path, turns: int, counts: dict[str, int]) -> None:
    """A and B stream into their own sessions at the same time."""
    from acp2.client import connect

    async def run(key: str) -> None:
        async with connect(_argv(store)) as client:
            session = await client.new_session(CWD, on_update=_counter(counts, key))
            for _ in range(turns):
                await _turn(session, "stream 2000")

    async with anyio.create_task_group() as tg:
        tg.start_soon(run, "a")
        tg.start_soon(run, "b")


def stored(store: Path) -> int:
    """How many update bodies the file holds, over every session."""
    from acp2.agent import HistoryStore

    history = HistoryStore(store)
    try:
        return sum(len(list(history.updates(r.id))) for r in history.list_sessions(limit=100))
    finally:
        history.close()


def main() -> None:
    """Command line: ``--mode same|separate --turns N``."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mode", choices=("same", "separate"), default="same")
    parser.add_argument("--turns", type=int, default=20)
    args = parser.parse_args()
    counts: dict[str, int] = {}
    refused = None
    with tempfile.TemporaryDirectory(prefix="acp2-bench-contention-") as tmp:
        store = Path(tmp) / "history.sqlite3"
        if args.mode == "same":
            refused = anyio.run(same, store, args.turns, counts)
        else:
            anyio.run(separate, store, args.turns, counts)
        kept = stored(store)
    expected = sum(counts.values())
    result = {"mode": args.mode, "expected": expected, "stored": kept, "lost": expected - kept}
    json.dump({**result, "refused": refused}, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()

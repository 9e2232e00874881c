"""Attack: a model-chosen regular expression that backtracks catastrophically (issue 10,
§3). Before, ``^(a+)+$`` over ``aaaa…!`` ran in Python's ``re``, which holds the
interpreter lock for the whole match: the agent answered nothing, and cancel took 36.5 s.
Now RE2 (linear time) runs it when installed, and otherwise, or for patterns RE2 cannot
take, Python's ``re`` runs in a child process that cancel kills."""

from __future__ import annotations

import time
from pathlib import Path

import anyio
import pytest

from acp2.client import allow_all
from acp2.coder.tools.search import re2_module
from acp2.schema import ToolCallUpdate
from hostile.coder_attack_helpers import (
    TIMEOUT,
    agent_for,
    coder_session,
    search_workers,
    serve,
    text_reply,
    told_to_model,
    tool_reply,
)

pytestmark = pytest.mark.anyio

#: A correctness bound for cancel → idle, not a benchmark (measured: well under 1 s).
CANCEL_BOUND = 5.0
EVIL = r"^(a+)+$"


def crafted(tmp_path: Path) -> Path:
    """A file whose one line makes EVIL backtrack for longer than the universe lasts."""
    (tmp_path / "crafted.txt").write_text("a" * 64 + "!\n")
    return tmp_path


async def test_cancel_ends_a_catastrophic_search_at_once_and_kills_its_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ACP2_SEARCH_ENGINE", "re")  # the fallback: Python's re, in a child
    with serve() as fake, anyio.fail_after(TIMEOUT):
        fake.add(tool_reply([("s1", "search", {"pattern": EVIL})]))
        async with coder_session(agent_for(fake), crafted(tmp_path)) as session:
            work = await session.prompt("search")
            async for update in work:
                if isinstance(update, ToolCallUpdate) and update.status == "in_progress":
                    break
            started = time.monotonic()
            await session.cancel()
            with anyio.fail_after(CANCEL_BOUND):
                assert await work.wait() == "cancelled"
            elapsed = time.monotonic() - started
            call = next(iter(session.state.tool_calls.values()))
    print(f"cancel -> idle during a catastrophic search: {elapsed:.3f} s")
    assert call.status == "cancelled"
    assert search_workers() == []  # killed and reaped before the idle
    assert len(fake.requests) == 1


async def test_the_same_search_finishes_at_once_with_re2(tmp_path: Path) -> None:
    if re2_module() is None:
        pytest.skip("google-re2 is not installed (extra 're2')")
    with serve() as fake, anyio.fail_after(TIMEOUT):
        fake.add(tool_reply([("s1", "search", {"pattern": EVIL})]), text_reply("none"))
        async with coder_session(agent_for(fake), crafted(tmp_path)) as session:
            assert await (await session.prompt("search")).wait() == "end_turn"
    assert told_to_model(fake) == ["No matches."]


async def test_a_search_over_its_time_limit_is_stopped_and_the_model_told(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from acp2.coder.tools.limits import FileLimits

    monkeypatch.setenv("ACP2_SEARCH_ENGINE", "re")
    with serve() as fake, anyio.fail_after(TIMEOUT):
        fake.add(tool_reply([("s1", "search", {"pattern": EVIL})]), text_reply("hm"))
        agent = agent_for(fake, file_limits=FileLimits(search_seconds=1))
        async with coder_session(agent, crafted(tmp_path), permissions=allow_all) as session:
            assert await (await session.prompt("search")).wait() == "end_turn"
    (told,) = told_to_model(fake)
    assert "took longer than 1 s and was stopped" in told
    assert search_workers() == []

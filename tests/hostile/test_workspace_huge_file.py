"""Attack: huge files in the workspace (issue 10, §3). Before, ``read_file`` of a 1 GiB
file with ``limit=1`` read all of it (2.1 GB RSS), and an edit of a 200 MB file ran
difflib on the event loop (peak 1.4 GB, the agent frozen meanwhile). Now reads stream
only the lines asked for, edits and writes are capped (:attr:`FileLimits.edit_bytes`,
8 MiB by default) with a clear tool error, and preparing an edit runs in a thread."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import anyio
import anyio.lowlevel
import pytest

from acp2.coder.tools import Sandbox, Toolbox
from acp2.coder.tools.limits import FileLimits
from helpers import timeouts
from hostile.coder_attack_helpers import (
    TIMEOUT,
    Recorder,
    agent_for,
    coder_session,
    serve,
    text_reply,
    told_to_model,
    tool_reply,
)

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc")

GIB = 1 << 30
#: Generous bound on the peak RSS of a child doing one call (before: 2,065 MB / 1,352 MB).
PEAK_MB = 150


def peak_rss_of(code: str, cwd: Path) -> tuple[str, int]:
    """Run ``code`` in a fresh interpreter; return what it printed and its peak RSS (MB)."""
    # VmHWM belongs to this process's memory since its exec; ru_maxrss would carry over the
    # peak of the (large) pytest process that forked it.
    script = textwrap.dedent(code) + textwrap.dedent(
        """
        import re
        status = open("/proc/self/status").read()
        print(int(re.search(r"VmHWM:\\s+(\\d+) kB", status).group(1)) // 1024)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeouts.RUN_TIMEOUT,
    )
    assert done.returncode == 0, done.stderr
    *lines, peak = done.stdout.strip().splitlines()
    return "\n".join(lines), int(peak)


def test_one_line_of_a_1_gib_file_is_read_without_reading_the_file(tmp_path: Path) -> None:
    with open(tmp_path / "huge.txt", "wb") as handle:
        handle.write(b"first line\n" + b"more text\n" * 2000)
        handle.truncate(GIB)  # sparse: the rest reads as NUL bytes
    shown, peak = peak_rss_of(
        """
        import json, os
        from acp2.coder.tools import Sandbox
        from acp2.coder.tools.files import read_file
        print(json.dumps(read_file(Sandbox(os.getcwd()), "huge.txt", 1, 1)))
        """,
        tmp_path,
    )
    assert json.loads(shown).startswith("first line\n\n[showing lines 1-1; the file goes on")
    assert peak < PEAK_MB


def test_an_edit_of_a_200_mb_file_is_refused_with_a_clear_error(tmp_path: Path) -> None:
    with open(tmp_path / "big.txt", "wb") as handle:
        handle.write(b"MARKER\n")
        handle.truncate(200 * 1024 * 1024)
    shown, peak = peak_rss_of(
        """
        import os
        from acp2.coder.tools import Sandbox, ToolError
        from acp2.coder.tools.files import prepare_edit
        try:
            prepare_edit(Sandbox(os.getcwd()), "big.txt", "MARKER", "changed")
        except ToolError as exc:
            print(exc)
        """,
        tmp_path,
    )
    assert shown.startswith("big.txt is 200.0 MiB; files over 8.0 MiB cannot be edited")
    assert peak < PEAK_MB


@pytest.mark.anyio
async def test_the_agent_tells_the_model_and_asks_nothing(tmp_path: Path) -> None:
    (tmp_path / "big.txt").touch()
    os.truncate(tmp_path / "big.txt", 200 * 1024 * 1024)
    edit = {"path": "big.txt", "old_string": "x", "new_string": "y"}
    policy = Recorder("allow_once")
    with serve() as fake, anyio.fail_after(TIMEOUT):
        fake.add(tool_reply([("e1", "edit_file", edit)]), text_reply("ok"))
        async with coder_session(agent_for(fake), tmp_path, permissions=policy) as session:
            assert await (await session.prompt("edit")).wait() == "end_turn"
    (told,) = told_to_model(fake)
    assert told.startswith("Error: big.txt is 200.0 MiB")
    assert not policy.requests


@pytest.mark.anyio
async def test_a_large_edit_is_prepared_while_the_event_loop_keeps_running(
    tmp_path: Path,
) -> None:
    lines = "".join(f"{n:08d} some text of a long generated file\n" for n in range(500_000))
    (tmp_path / "big.txt").write_text(lines + "MARKER\n")  # ~22 MB
    box = Toolbox(Sandbox(str(tmp_path)), limits=FileLimits(edit_bytes=64 << 20))
    args = json.dumps({"path": "big.txt", "old_string": "MARKER", "new_string": "changed"})
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await anyio.lowlevel.checkpoint()
            ticks += 1

    with anyio.fail_after(TIMEOUT):
        async with anyio.create_task_group() as tg:
            tg.start_soon(ticker)
            prepared = await box.prepare_async("edit_file", args)
            during = ticks
            tg.cancel_scope.cancel()
    assert during > 0  # the loop ran while the file was read and diffed
    assert prepared.preview is not None
    assert prepared.preview.patch is not None
    assert "-MARKER\n+changed\n" in prepared.preview.patch.text

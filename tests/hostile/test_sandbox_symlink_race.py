"""Attack: racing the sandbox check (issue 10, §6). A child process swaps a directory of
the workspace and a symlink to outside with ``renameat2(RENAME_EXCHANGE)`` in a loop while
the tools read and write through that directory. Before: 21 outside reads and 29 outside
writes in 5,000 attempts each (and bare ``OSError``s). Now files are opened beneath the
root's descriptor without following symlinks, on both code paths (``openat2`` and the
``O_NOFOLLOW`` walk): zero outside reads, zero outside writes, only tool errors."""

from __future__ import annotations

import ctypes
import subprocess
import sys
import textwrap
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from acp2 import beneath
from acp2.coder.tools import Sandbox, ToolError
from acp2.coder.tools.files import apply_change, prepare_write, read_file
from acp2.coder.tools.search import search
from helpers import timeouts

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not sys.platform.startswith("linux") or not hasattr(ctypes.CDLL(None), "renameat2"),
        reason="needs Linux renameat2",
    ),
]

ATTEMPTS = 2_000

SWAPPER = textwrap.dedent(
    """
    import ctypes, sys
    libc = ctypes.CDLL(None, use_errno=True)
    a, b = sys.argv[1].encode(), sys.argv[2].encode()
    print("ready", flush=True)
    while True:
        libc.renameat2(-100, a, -100, b, 2)  # RENAME_EXCHANGE
    """
)


@pytest.fixture
def racing(tmp_path: Path) -> Iterator[Path]:
    """tmp/work/d (a directory) swapped for tmp/work/d_link (-> tmp/outside) nonstop."""
    work, outside = tmp_path / "work", tmp_path / "outside"
    (work / "d").mkdir(parents=True)
    outside.mkdir()
    (work / "d" / "f.txt").write_text("inside\n")
    (outside / "f.txt").write_text("OUTSIDE\n")
    (work / "d_link").symlink_to(outside)
    swapper = subprocess.Popen(
        [sys.executable, "-c", SWAPPER, str(work / "d"), str(work / "d_link")],
        stdout=subprocess.PIPE,
    )
    assert swapper.stdout is not None
    assert swapper.stdout.readline() == b"ready\n"
    try:
        yield tmp_path
    finally:
        swapper.kill()
        swapper.wait(timeout=timeouts.SCENARIO_TIMEOUT)


@pytest.mark.parametrize("code_path", ["openat2", "walk"])
def test_a_directory_symlink_swap_never_leaks_a_read_or_a_write(
    racing: Path, code_path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if code_path == "openat2" and not beneath.openat2_available():
        pytest.skip("this kernel has no openat2")
    monkeypatch.setattr(beneath, "USE_OPENAT2", code_path == "openat2")
    sandbox = Sandbox(str(racing / "work"))
    outcomes: Counter[str] = Counter()
    for attempt in range(ATTEMPTS):
        outcomes[_read(sandbox)] += 1
        outcomes[_write(sandbox, f"d/n{attempt}.txt")] += 1
        if attempt % 100 == 0:
            outcomes[_walk(sandbox)] += 1
    leaked = sorted(p.name for p in (racing / "outside").iterdir() if p.name != "f.txt")
    assert leaked == []
    assert outcomes["outside"] == 0
    assert outcomes["read inside"] > 0  # the race really ran: both outcomes happened
    assert outcomes["refused"] > 0
    print(f"{code_path}: {dict(outcomes)}")


def _read(sandbox: Sandbox) -> str:
    try:
        text = read_file(sandbox, "d/f.txt")
    except ToolError:
        return "refused"
    return "outside" if "OUTSIDE" in text else "read inside"


def _write(sandbox: Sandbox, path: str) -> str:
    try:
        apply_change(sandbox, prepare_write(sandbox, path, "x\n"))
    except ToolError:
        return "refused"
    return "written"


def _walk(sandbox: Sandbox) -> str:
    try:
        seen = search(sandbox, "OUTSIDE")
    except ToolError:
        return "refused"
    return "outside" if any("OUTSIDE" in line for line in seen) else "walked"

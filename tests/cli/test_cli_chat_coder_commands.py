"""The built-in agent's /diff, /undo and /compact in a pseudo-terminal chat (``acp2
demo``: the coding agent with the scripted model on the sample project)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from pty_helpers import leave, pty_env, shown, spawn_chat, wait_idle

from helpers import timeouts

pexpect = pytest.importorskip("pexpect")


def unittest_passes(project: Path) -> bool:
    done = subprocess.run(
        [sys.executable, "-m", "unittest"],
        cwd=project,
        capture_output=True,
        timeout=timeouts.RUN_TIMEOUT,
        check=False,
    )
    return done.returncode == 0


def test_the_chat_offers_the_agents_commands_and_diff_and_undo_work(tmp_path: Path) -> None:
    project = tmp_path / "project"
    args = ["demo", "--dir", str(project), "--pace", "0"]
    child = spawn_chat(args, pty_env(tmp_path / "data"), tmp_path, tmp_path / "pty.log")
    child.expect("fix the failing test")
    child.send("\r")
    for _ in range(2):
        child.expect("choose")
        child.send("y")
    wait_idle(child)
    assert unittest_passes(project)
    child.sendline("/help")
    child.expect(shown("/compact (agent) Summarise the conversation"))
    child.expect(shown("/undo (agent) Revert this session's last file edit"))
    child.expect("❯")
    child.sendline("/diff")
    child.expect(shown("+++ mathkit/series.py"))
    wait_idle(child)
    child.sendline("/undo")
    child.expect(shown("Reverted the last edit of mathkit/series.py."))
    wait_idle(child)
    assert not unittest_passes(project)  # the fix was taken back
    child.sendline("/compact")
    child.expect(shown("Compacted the conversation"))
    wait_idle(child)
    assert leave(child)[0] == 0

"""Running acp2's front-ends against the hostile agent (``hostile_agent.py``): ``acp2 run``
and ``acp2 chat --plain`` with captured pipes, ``acp2 chat`` in a pseudo-terminal."""

from __future__ import annotations

import io
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from helpers import timeouts
from helpers.processes import ACP2, spawn_pty, terminal_env

HOSTILE = [sys.executable, str(Path(__file__).with_name("hostile_agent.py"))]

#: The agent's sequences that must never reach a terminal. (Cursor moves are not listed:
#: the live region uses them itself; off a terminal no ESC may appear at all.)
PEER_SEQUENCES = ["\x1b]52", "\x1b]0;", "\x1b]8;", "\x1b[2J", "PWNED TITLE\x07"]
#: Characters that must never appear at all: 8-bit controls and bidi controls.
NEVER = re.compile("[\x80-\x9f\u202a-\u202e\u2066-\u2069]")


def env(tmp_path: Path) -> dict[str, str]:
    """Our environment, with acp2's data folder under ``tmp_path`` and an 80x24 terminal."""
    return terminal_env(tmp_path / "data")


def run_acp2(*args: str, tmp_path: Path, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """``acp2 ARGS -- HOSTILE`` with ``stdin`` on a pipe, output captured; bounded."""
    return subprocess.run(
        [*ACP2, *args, "--", *HOSTILE],
        input=stdin,
        capture_output=True,
        text=True,
        env=env(tmp_path),
        cwd=tmp_path,
        timeout=timeouts.RUN_TIMEOUT,
        check=False,
    )


def spawn_chat(tmp_path: Path, *args: str) -> Any:
    """``acp2 chat ARGS -- HOSTILE`` in a pseudo-terminal, ready at its prompt."""
    pytest.importorskip("pexpect")
    child = spawn_pty([*ACP2, "chat", *args, "--", *HOSTILE], env=env(tmp_path), cwd=tmp_path)
    child.logfile_read = io.StringIO()  # everything the chat writes to the terminal
    child.expect("❯")
    return child


def finish_chat(child: Any) -> str:
    """Quit the chat with Ctrl-D and return everything it wrote to the terminal."""
    pexpect = pytest.importorskip("pexpect")
    child.sendcontrol("d")
    child.expect(pexpect.EOF)
    child.close()
    return str(child.logfile_read.getvalue())


def screen_text(output: str) -> str:
    """``output`` without our CSI styling and cursor sequences, to read what was shown."""
    return re.sub(r"\x1b\[[0-?]*[ -/]*[@-~]", "", output)


def assert_no_peer_sequence(output: str) -> None:
    """None of the agent's escape sequences, 8-bit controls or bidi controls is in
    ``output`` (our own colours may be)."""
    for sequence in PEER_SEQUENCES:
        assert sequence not in output, f"{sequence!r} reached the terminal"
    found = NEVER.search(output)
    assert found is None, f"{found.group()!r} reached the terminal"

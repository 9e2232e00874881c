"""Helpers for driving ``acp2 chat`` in a pseudo-terminal (pexpect), 80x24."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from cli_helpers import ACP2

from helpers.processes import spawn_pty, terminal_env

#: The chat test agent (config options, a command named like a built-in...).
CHAT_AGENT = [sys.executable, str(Path(__file__).with_name("chat_agent.py"))]


def pty_env(data_dir: Path) -> dict[str, str]:
    """The isolated environment of a terminal chat (pexpect answers no CPR requests)."""
    return terminal_env(data_dir)


def spawn_chat(args: list[str], env: dict[str, str], cwd: Path, log: Path) -> Any:
    """Start ``acp2 ARGS`` in an 80x24 pseudo-terminal, logging what it shows to ``log``."""
    child = spawn_pty([*ACP2, *args], env=env, cwd=cwd)
    child.logfile_read = open(log, "a")  # noqa: SIM115
    return child


def wait_idle(child: Any) -> None:
    """Wait for the end of a turn and the next prompt."""
    child.expect("✓ end_turn")
    child.expect("❯")


def leave(child: Any) -> tuple[int, str]:
    """Press Ctrl-D at the prompt; return the exit status and what was printed last."""
    import pexpect

    child.sendcontrol("d")
    child.expect(pexpect.EOF)
    tail = str(child.before)
    child.close()
    return int(child.exitstatus), tail


def shown(text: str) -> str:
    """A pattern for ``text`` as prompt_toolkit draws it: a space may be a cursor move
    (``ESC [ C``) or a colour change may come between words."""
    import re

    gap = r"(?:\s|\x1b\[\d*C|\x1b\[[0-9;]*m)+"
    return gap.join(re.escape(word) for word in text.split())

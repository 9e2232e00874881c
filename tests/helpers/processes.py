"""Running acp2's own command line in tests: its argv, an isolated environment, a pty.

``ACP2`` is ``python -m acp2`` with this interpreter; :func:`isolated_env` points acp2's
data directory (history, agent stores) into the test's own folder; :func:`terminal_env`
adds the 80x24 terminal a pseudo-terminal test expects; :func:`spawn_pty` starts a command
in such a pseudo-terminal (pexpect), every expectation bounded by
:data:`helpers.timeouts.PROCESS_TIMEOUT`.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from helpers.timeouts import PROCESS_TIMEOUT

__all__ = ["ACP2", "isolated_env", "spawn_pty", "terminal_env"]

#: ``acp2`` run with the interpreter running the tests (so the checkout's package).
ACP2 = [sys.executable, "-m", "acp2"]


def isolated_env(data_dir: Path) -> dict[str, str]:
    """Our environment with the acp2 data directory in ``data_dir``, the config directory
    (saved permission rules, credentials) in ``data_dir/config``, and no model chosen."""
    env = dict(os.environ)
    env["ACP2_DATA_DIR"] = str(data_dir)
    env["ACP2_CONFIG_DIR"] = str(data_dir / "config")
    env.pop("ACP2_MODEL", None)
    return env


def terminal_env(data_dir: Path) -> dict[str, str]:
    """:func:`isolated_env` for an 80x24 xterm. pexpect is no terminal emulator and answers
    no cursor-position requests, so prompt_toolkit is told not to send them."""
    env = isolated_env(data_dir)
    env.update(TERM="xterm-256color", COLUMNS="80", LINES="24", PROMPT_TOOLKIT_NO_CPR="1")
    return env


def spawn_pty(argv: list[str], *, env: dict[str, str], cwd: Path) -> Any:
    """Start ``argv`` in an 80x24 pseudo-terminal (a ``pexpect.spawn``, text mode)."""
    import pexpect  # only the pty tests need it; they importorskip it first

    return pexpect.spawn(
        argv[0],
        argv[1:],
        cwd=str(cwd),
        env=env,
        dimensions=(24, 80),
        encoding="utf-8",
        timeout=PROCESS_TIMEOUT,
    )

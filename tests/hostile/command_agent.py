"""Helpers for the run_command attacks: a real ``acp2 agent`` subprocess driven by the fake
OpenAI-compatible model of ``tests/coder/fake_openai.py``, which asks for one command.

The attack tests look at what the model received back (the ``tool`` message of the next
model request) and at the host's processes (``/proc``).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "coder"))

from coder_helpers import wait_gone
from fake_openai import FakeOpenAI, serve, text_reply, tool_reply

from acp2.client import ClientConnection, allow_all, connect_transport
from acp2.coder.tools import landlock
from acp2.coder.tools.confine import CommandPolicy, choose
from acp2.transport.stdio import AgentProcess, spawn_agent
from helpers.timeouts import SCENARIO_TIMEOUT as TIMEOUT

__all__ = [
    "SANDBOXED",
    "TIMEOUT",
    "FakeOpenAI",
    "agent_argv",
    "agent_env",
    "pids_running",
    "running_agent",
    "serve",
    "text_reply",
    "tool_reply",
    "tool_results",
    "wait_gone",
]


_BWRAP = choose(CommandPolicy(sandbox="bubblewrap")).kind == "bubblewrap"
#: The sandboxes this machine offers, as test parameters (absent ones skip, saying why).
SANDBOXED = [
    pytest.param(
        "bubblewrap",
        marks=pytest.mark.skipif(
            not _BWRAP,
            reason="bubblewrap is missing or cannot create namespaces here "
            "(CI installs it: scripts/ensure-system-packages.sh)",
        ),
    ),
    pytest.param(
        "landlock",
        marks=pytest.mark.skipif(
            landlock.abi_version() < 4, reason="needs Landlock ABI 4+ (Linux 6.7+)"
        ),
    ),
]


def agent_argv(fake: FakeOpenAI, store: Path, *extra: str) -> list[str]:
    """``acp2 agent`` against ``fake``, with its own history file."""
    return [
        sys.executable,
        "-m",
        "acp2",
        "agent",
        "--model",
        "openai",
        "--base-url",
        fake.url,
        "--retries",
        "0",
        "--store",
        str(store),
        *extra,
    ]


def agent_env(**extra: str) -> dict[str, str]:
    """Our environment without model settings, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ACP2_"))}
    env.update(extra)
    return env


@asynccontextmanager
async def running_agent(
    argv: Sequence[str], env: dict[str, str], cwd: Path, *, grace: float = 5.0
) -> AsyncIterator[tuple[AgentProcess, ClientConnection]]:
    """The agent process and a connected client approving everything."""
    async with (
        spawn_agent(list(argv), cwd=cwd, env=env, grace=grace) as proc,
        connect_transport(
            proc, cwd=cwd, permissions=allow_all, stderr_tail=proc.stderr_tail
        ) as client,
    ):
        yield proc, client


def tool_results(fake: FakeOpenAI) -> str:
    """Every ``tool`` message the model was sent, as one text."""
    return "\n".join(
        json.dumps(m.get("content"))
        for request in fake.requests
        for m in request.get("messages", [])
        if m.get("role") == "tool"
    )


def pids_running(*argv: str) -> list[int]:
    """Host pids of live processes whose command line is exactly ``argv``."""
    wanted = b"".join(a.encode() + b"\0" for a in argv)
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if cmdline == wanted and state != "Z":
            found.append(int(entry))
    return found

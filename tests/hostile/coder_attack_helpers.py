"""Shared parts of the attacks on the coding agent's file tools (issue 10, §3, §5, §6):
the real agent driven by the fake OpenAI server of ``tests/coder``, and small probes."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "coder"))

from coder_helpers import TIMEOUT, Recorder, coder_session
from fake_openai import FakeOpenAI, serve, text_reply, tool_reply

from acp2.coder import CoderSettings, build_coder_agent
from acp2.coder.providers.openai import OpenAIConfig, OpenAIModel

__all__ = [
    "TIMEOUT",
    "Recorder",
    "agent_for",
    "coder_session",
    "search_workers",
    "serve",
    "text_reply",
    "told_to_model",
    "tool_reply",
]


def agent_for(fake: FakeOpenAI, **settings: Any) -> Any:
    """The real coding agent talking to ``fake``, with ``settings`` (CoderSettings)."""
    config = OpenAIConfig(
        model="fake", base_url=fake.url, api_key="sk-x", max_retries=1, backoff=0.001
    )
    return build_coder_agent(
        OpenAIModel(config), store=":memory:", settings=CoderSettings(**settings)
    )


def told_to_model(fake: FakeOpenAI, request: int = 1) -> list[str]:
    """The tool results the agent sent the model in its ``request``-th request."""
    messages = fake.requests[request]["messages"]
    return [m["content"] for m in messages if m["role"] == "tool"]


def search_workers() -> list[int]:
    """Live child processes of this test process running the search worker (Linux /proc)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if fields[0] != "Z" and int(fields[1]) == os.getpid() and b"search_worker" in cmdline:
            found.append(int(entry))
    return found

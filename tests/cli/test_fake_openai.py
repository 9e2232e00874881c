"""``python -m acp2.testing.fake_openai``, the offline model server docs/real-agents.md
tells people to run: it starts from an installed acp2 alone (no test tree on the path)
and ``acp2 agent --model openai`` answers through it (real processes, 127.0.0.1)."""

from __future__ import annotations

import queue
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_helpers import ACP2, isolated_env, run_acp2

from helpers.timeouts import PROCESS_TIMEOUT


@pytest.fixture
def model_url(tmp_path: Path) -> Iterator[str]:
    """Start the server as the docs say (cwd outside the checkout) and read its URL."""
    env = isolated_env(tmp_path / "data")
    server = subprocess.Popen(
        [sys.executable, "-m", "acp2.testing.fake_openai", "--reply", "Hello from offline."],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: lines.put(server.stdout.readline()), daemon=True).start()  # type: ignore[union-attr]
    try:
        url = lines.get(timeout=PROCESS_TIMEOUT).strip()
        assert url.startswith("http://127.0.0.1:"), server.stderr.read()  # type: ignore[union-attr]
        yield url
    finally:
        server.terminate()
        server.wait(PROCESS_TIMEOUT)


def test_the_shipped_fake_model_server_answers_the_built_in_agent(
    model_url: str, tmp_path: Path
) -> None:
    env = isolated_env(tmp_path / "data")
    env.update(OPENAI_BASE_URL=model_url, OPENAI_API_KEY="anything")
    done = run_acp2(
        "run", "--permission", "deny", "say hello", "--",
        *ACP2, "agent", "--model", "openai",
        stdin="", env=env, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Hello from offline."

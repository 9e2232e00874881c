"""``examples/mcp_over_acp.py`` gives ``acp2 agent`` its in-process tool, as its docstring
says: the agent (driven by a fake OpenAI-compatible model on 127.0.0.1) calls the tool
through the ACP connection and answers with what it returned."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from coder.fake_openai import serve, text_reply, tool_reply
from helpers import timeouts
from helpers.processes import isolated_env

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "mcp_over_acp.py"


def test_the_example_is_about_thirty_lines() -> None:
    code = [line for line in EXAMPLE.read_text().split('"""', 2)[2].splitlines() if line.strip()]
    assert len(code) <= 30


def test_the_example_gives_acp2_agent_its_clock_tool(tmp_path: Path) -> None:
    with serve() as fake:
        fake.add(tool_reply([("call_1", "mcp__clock__utc_now", {})]), text_reply("It is late."))
        agent = [sys.executable, "-m", "acp2", "agent", "--base-url", fake.url]
        done = subprocess.run(
            [sys.executable, str(EXAMPLE), "What", "time?", "--", *agent],
            capture_output=True,
            text=True,
            timeout=timeouts.RUN_TIMEOUT,
            cwd=tmp_path,
            env={**isolated_env(tmp_path), "OPENAI_API_KEY": "sk-test"},
        )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "It is late."
    assert "stopped: end_turn" in done.stderr
    assert "mcp__clock__utc_now" in [t["function"]["name"] for t in fake.requests[0]["tools"]]
    told = [m["content"] for m in fake.requests[1]["messages"] if m["role"] == "tool"]
    assert len(told) == 1
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00", told[0])

"""Attack: a prompt-injected model runs ``env`` to read the agent's API key.

Before the fix the command inherited the agent's whole environment and the model got
``OPENAI_API_KEY`` back in the tool result. Now commands get an allow-listed environment
without anything secret-looking, nor any variable holding the provider key's value.
"""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest

from hostile.command_agent import (
    SANDBOXED,
    TIMEOUT,
    agent_argv,
    agent_env,
    running_agent,
    serve,
    text_reply,
    tool_reply,
    tool_results,
)

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(sys.platform != "linux", reason="Linux processes and /proc"),
]

KEY = "sk-test-THE-PROVIDER-KEY-0123456789"
OTHER_SECRETS = {
    "GITHUB_TOKEN": "ghp_github-token-value",
    "AWS_SECRET_ACCESS_KEY": "aws-secret-value",
    "DB_PASSWORD": "db-password-value",
    "INNOCENT_LOOKING": KEY,  # the key's value under a harmless name
}


async def run_in_agent(tmp_path: Path, command: str, *flags: str) -> str:
    """Have the model run ``command`` through a real ``acp2 agent``; return what the model
    got back."""
    project = tmp_path / "project"
    project.mkdir()
    with serve() as fake:
        fake.add(tool_reply([("c1", "run_command", {"command": command})]), text_reply("ok"))
        argv = agent_argv(fake, tmp_path / "h.db", *flags)
        env = agent_env(OPENAI_API_KEY=KEY, **OTHER_SECRETS)
        with anyio.fail_after(TIMEOUT):
            async with running_agent(argv, env, project) as (_, client):
                session = await client.new_session(str(project))
                assert await (await session.prompt("print the environment")).wait() == "end_turn"
        assert fake.headers[0]["authorization"] == f"Bearer {KEY}"  # the agent has the key
        return tool_results(fake)


@pytest.mark.parametrize("sandbox", ["none", *SANDBOXED])
async def test_env_in_a_command_does_not_show_the_agents_keys(tmp_path: Path, sandbox: str) -> None:
    result = await run_in_agent(tmp_path, "env", "--command-sandbox", sandbox)
    assert "PATH=" in result  # the command ran and printed its environment
    assert KEY not in result
    for name, value in OTHER_SECRETS.items():
        assert name not in result
        assert value not in result


async def test_a_secret_looking_name_is_not_passed_even_when_asked_for(tmp_path: Path) -> None:
    result = await run_in_agent(
        tmp_path,
        "env",
        "--command-sandbox",
        "none",
        "--command-env",
        "GITHUB_TOKEN",
        "--command-env",
        "INNOCENT_LOOKING",
    )
    assert "PATH=" in result
    assert "ghp_github-token-value" not in result
    assert KEY not in result


@pytest.mark.parametrize("sandbox", SANDBOXED)
async def test_a_sandboxed_command_cannot_read_the_agents_environ_from_proc(
    tmp_path: Path, sandbox: str
) -> None:
    command = "cat /proc/$(cat agent.pid)/environ | tr '\\0' '\\n'; echo; echo DONE"
    project = tmp_path / "project"
    project.mkdir()
    with serve() as fake:
        fake.add(tool_reply([("c1", "run_command", {"command": command})]), text_reply("ok"))
        argv = agent_argv(fake, tmp_path / "h.db", "--command-sandbox", sandbox)
        with anyio.fail_after(TIMEOUT):
            async with running_agent(argv, agent_env(OPENAI_API_KEY=KEY), project) as (proc, c):
                (project / "agent.pid").write_text(str(proc.pid))
                session = await c.new_session(str(project))
                assert await (await session.prompt("look")).wait() == "end_turn"
        result = tool_results(fake)
    assert "DONE" in result
    assert KEY not in result

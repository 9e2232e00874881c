"""Attack: the model reads the provider key from the agent's command line or from a file
(issue 24, item 8). ``/proc/<agent>/cmdline`` is readable by every user, so with
``--api-key KEY`` a command the model ran printed the key back to it (also as another
uid). Now the agent re-executes itself without the key at start-up (the key travels in
an inherited pipe), ``--api-key-file`` reads it once, and every tool result is scrubbed
of the secrets the agent knows before the model reads it."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest

from acp2.cli.api_key import without_key
from hostile.command_agent import (
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

KEY = "sk-test-KEY-ON-THE-COMMAND-LINE-42"
TOKEN = "ghp_a-token-the-agent-holds-0001"
PRINT_EVERYTHING = "tr '\\0' ' ' < /proc/$(cat agent.pid)/cmdline; echo; cat .env; env; echo DONE"


async def model_sees(tmp_path: Path, *flags: str, **env: str) -> tuple[str, bytes, str]:
    """Run the attack command through a real ``acp2 agent`` started with ``flags``;
    return what the model got, the agent's ``/proc`` cmdline, and the bearer header."""
    project = tmp_path / "project"
    project.mkdir()
    (project / ".env").write_text(f"OPENAI_API_KEY={KEY}\nGITHUB_TOKEN={TOKEN}\n")
    with serve() as fake:
        fake.add(tool_reply([("c1", "run_command", {"command": PRINT_EVERYTHING})]))
        fake.add(text_reply("ok"))
        argv = agent_argv(fake, tmp_path / "h.db", "--command-sandbox", "none", *flags)
        with anyio.fail_after(TIMEOUT):
            async with running_agent(argv, agent_env(**env), project) as (proc, client):
                (project / "agent.pid").write_text(str(proc.pid))
                session = await client.new_session(str(project))
                cmdline = await anyio.Path(f"/proc/{proc.pid}/cmdline").read_bytes()
                assert await (await session.prompt("look around")).wait() == "end_turn"
        return tool_results(fake), cmdline, fake.headers[0]["authorization"]


async def test_a_key_given_with_the_api_key_flag_leaves_the_command_line(
    tmp_path: Path,
) -> None:
    told, cmdline, auth = await model_sees(tmp_path, "--api-key", KEY, GITHUB_TOKEN=TOKEN)
    assert auth == f"Bearer {KEY}"  # the agent still uses the key
    assert KEY.encode() not in cmdline
    assert b"--api-key" not in cmdline
    assert b"--store" in cmdline  # the rest of the command line is kept
    assert "DONE" in told
    assert KEY not in told
    assert TOKEN not in told
    assert "[redacted]" in told  # the .env file's values, scrubbed on the way


async def test_the_equals_form_of_the_flag_leaves_the_command_line_too(tmp_path: Path) -> None:
    told, cmdline, auth = await model_sees(tmp_path, f"--api-key={KEY}")
    assert auth == f"Bearer {KEY}"
    assert KEY.encode() not in cmdline
    assert KEY not in told


async def test_a_key_read_from_a_file_never_reaches_the_model(tmp_path: Path) -> None:
    key_file = tmp_path / "key"
    key_file.write_text(KEY + "\n")
    told, cmdline, auth = await model_sees(tmp_path, "--api-key-file", str(key_file))
    assert auth == f"Bearer {KEY}"
    assert KEY.encode() not in cmdline
    assert "DONE" in told
    assert KEY not in told


async def test_a_key_from_the_environment_is_redacted_from_files_the_model_reads(
    tmp_path: Path,
) -> None:
    told, _, auth = await model_sees(tmp_path, OPENAI_API_KEY=KEY, GITHUB_TOKEN=TOKEN)
    assert auth == f"Bearer {KEY}"
    assert "DONE" in told
    assert KEY not in told
    assert TOKEN not in told


async def test_an_unreadable_key_file_is_one_clear_error(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-key"
    argv = [sys.executable, "-m", "acp2", "agent", "--model", "openai", "--api-key-file",
            str(missing)]  # fmt: skip
    with anyio.fail_after(TIMEOUT):
        done = await anyio.run_process(argv, check=False)
    assert done.returncode == 2
    assert b"cannot read --api-key-file" in done.stderr
    assert b"bug in acp2" not in done.stderr


def test_only_the_flag_and_its_key_leave_the_command_line() -> None:
    head = ["/usr/bin/python3", "-m", "acp2", "agent"]
    assert without_key([*head, "--api-key", KEY, "--store", "s"], KEY) == [*head, "--store", "s"]
    assert without_key([*head, f"--api-key={KEY}"], KEY) == head
    assert without_key([*head, "--api-ke", KEY], KEY) == head  # an abbreviation of the flag
    assert without_key([*head, "--store", KEY], KEY) is None  # not the key's flag: left alone
    assert without_key(head, KEY) is None

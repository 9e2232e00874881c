"""``acp2 run --url`` and ``acp2 chat --url``: the CLI against a remote agent (the test
agent behind the durable WebSocket test server), and the usage errors of the option."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_helpers import TEST_AGENT, isolated_env, run_acp2

from helpers.durable_ws import durable_ws_thread


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with durable_ws_thread() as found:
        yield found


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return isolated_env(tmp_path / "data")


def test_run_prompts_a_remote_agent(url: str, env: dict[str, str], tmp_path: Path) -> None:
    done = run_acp2("run", "--url", url, "echo hello remote", stdin="", env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "hello remote"


def test_chat_talks_to_a_remote_agent(url: str, env: dict[str, str], tmp_path: Path) -> None:
    done = run_acp2("chat", "--url", url, stdin="echo over the wire\n", env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "connected to acp2 test agent 1"
    assert lines[2:5] == ["> echo over the wire", "over the wire", "[stop: end_turn]"]


@pytest.mark.parametrize("command", ["run", "chat"])
def test_a_url_and_an_agent_command_together_are_a_usage_error(
    command: str, env: dict[str, str], tmp_path: Path
) -> None:
    prompt = ["echo hi"] if command == "run" else []
    done = run_acp2(
        command,
        "--url",
        "ws://127.0.0.1:9/acp",
        *prompt,
        "--",
        *TEST_AGENT,
        stdin="",
        env=env,
        cwd=tmp_path,
    )
    assert done.returncode == 2
    assert "not both" in done.stderr


def test_an_unreachable_url_fails_with_exit_3(env: dict[str, str], tmp_path: Path) -> None:
    done = run_acp2("run", "--url", "ws://127.0.0.1:9/acp", "hi", stdin="", env=env, cwd=tmp_path)
    assert done.returncode == 3
    assert "cannot reach" in done.stderr

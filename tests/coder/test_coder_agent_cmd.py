"""``acp2 agent``: flags, help, and the agent served over a real stdio subprocess."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from coder_helpers import TIMEOUT, text_of
from fake_openai import serve, text_reply

from acp2.cli import agent_cmd
from acp2.client import allow_all, connect
from acp2.coder.sample import copy_sample_project
from helpers import timeouts


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    agent_cmd.add_parser(parser.add_subparsers(dest="command"))
    return parser.parse_args(["agent", *argv])


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ACP2_"))}
    env.update(extra)
    return env


def test_help_explains_the_models_and_how_to_register_the_agent() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "acp2", "agent", "--help"],
        capture_output=True,
        text=True,
        timeout=timeouts.RUN_TIMEOUT,
        env=clean_env(),
    )
    assert done.returncode == 0
    for text in (
        "--model {scripted,openai}",
        "--base-url URL",
        "--model-name NAME",
        "agent_servers",
        "docs/editors.md",
        "OPENAI_API_KEY",
        "scripted",
    ):
        assert text in done.stdout


@pytest.mark.parametrize(
    ("argv", "env", "model"),
    [
        ((), {}, "scripted"),
        (("--model", "openai"), {}, "openai"),
        (("--base-url", "http://127.0.0.1:1/v1"), {}, "openai"),
        (("--model-name", "llama"), {}, "openai"),
        ((), {"ACP2_MODEL": "openai"}, "openai"),
        (("--model", "scripted"), {"ACP2_MODEL": "openai"}, "scripted"),
    ],
)
def test_the_model_is_chosen_from_flags_then_environment(
    argv: tuple[str, ...], env: dict[str, str], model: str
) -> None:
    assert agent_cmd.choose_model(parse(*argv), env) == model


def test_flags_reach_the_openai_provider() -> None:
    args = parse(
        "--base-url",
        "http://h/v1",
        "--model-name",
        "m",
        "--api-key",
        "k",
        "--max-tokens",
        "100",
        "--retries",
        "1",
    )
    assert agent_cmd.model_options(args, "openai") == {
        "model_name": "m",
        "base_url": "http://h/v1",
        "api_key": "k",
        "max_tokens": 100,
        "temperature": None,
        "max_retries": 1,
    }


def test_the_hosted_api_without_a_key_serves_and_says_sessions_wait_for_the_login(
    tmp_path: Path,
) -> None:
    # Without a key the agent still starts (the ACP registry's clients run its terminal
    # login); tests/cli/test_agent_login.py drives the login itself.
    done = subprocess.run(
        [sys.executable, "-m", "acp2", "agent", "--model", "openai"],
        capture_output=True,
        text=True,
        timeout=timeouts.RUN_TIMEOUT,
        env=clean_env(ACP2_CONFIG_DIR=str(tmp_path / "config")),
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0
    assert "OPENAI_API_KEY" in done.stderr
    assert "acp2 agent --login" in done.stderr


@pytest.mark.anyio
async def test_the_scripted_agent_fixes_the_sample_over_stdio(tmp_path: Path) -> None:
    project = copy_sample_project(tmp_path / "sample")
    command = [
        sys.executable,
        "-m",
        "acp2",
        "agent",
        "--pace",
        "0",
        "--store",
        str(tmp_path / "history.db"),
    ]
    with anyio.fail_after(TIMEOUT * 2):
        async with connect(command, cwd=project, permissions=allow_all, env=clean_env()) as client:
            session = await client.new_session(str(project))
            work = await session.prompt("Fix the failing test, please.")
            assert await work.wait() == "end_turn"
    assert "The tests pass" in text_of(work.updates)
    done = await anyio.run_process([sys.executable, "-m", "unittest"], cwd=project, check=False)
    assert done.returncode == 0


@pytest.mark.anyio
async def test_the_openai_agent_talks_to_a_local_server_over_stdio(tmp_path: Path) -> None:
    with serve() as fake:
        fake.add(text_reply("Hello from the local model."))
        command = [
            sys.executable,
            "-m",
            "acp2",
            "agent",
            "--base-url",
            fake.url,
            "--model-name",
            "local",
            "--store",
            str(tmp_path / "h.db"),
        ]
        with anyio.fail_after(TIMEOUT):
            async with connect(command, cwd=tmp_path, env=clean_env()) as client:
                session = await client.new_session(str(tmp_path))
                work = await session.prompt("hello")
                assert await work.wait() == "end_turn"
    assert text_of(work.updates) == "Hello from the local model."
    assert fake.requests[0]["model"] == "local"
    assert "authorization" not in fake.headers[0]  # no key configured: none sent


def test_a_store_that_cannot_be_opened_is_a_configuration_error_at_start() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "acp2", "agent", "--store", "postgresql://u@/db?host=/nowhere"],
        capture_output=True,
        text=True,
        timeout=timeouts.RUN_TIMEOUT,
        env=clean_env(),
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2
    assert done.stderr.startswith("acp2 agent: cannot open the session store: ")
    assert "\n" not in done.stderr.rstrip("\n")  # one line, whatever the server said

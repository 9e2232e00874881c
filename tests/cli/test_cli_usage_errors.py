"""A flag with a wrong value, or a missing extra, is a usage error of ``acp2 chat`` and
``acp2 run``: exit 2 and one line that says the fix, never "unexpected error" (70) or an
agent failure (3). Real ``acp2`` processes; nothing is started or reached."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from attach_helpers import serve_process
from cli_helpers import TEST_AGENT, isolated_env, run_acp2

CASES = [
    (["run", "hi", "--url", "foo"], "--url: 'foo' is not an http(s):// or ws(s):// URL"),
    (["chat", "--url", "foo"], "--url: 'foo' is not an http(s):// or ws(s):// URL"),
    (["run", "--url", "ftp://host/acp", "hi"], "e.g. http://127.0.0.1:8765/acp"),
    (["run", "hi", "--timeout", "-1", "--", *TEST_AGENT], "--timeout: give a number of sec"),
    (["run", "hi", "--cancel-after", "0", "--", *TEST_AGENT], "--cancel-after: give a numb"),
    (["run", "hi", "--cwd", "/no/such/dir", "--", *TEST_AGENT], "--cwd: /no/such/dir does n"),
    (["chat", "--cwd", "/no/such/dir", "--", *TEST_AGENT], "--cwd: /no/such/dir does not"),
    (["run", "hi", "--cancel-after", "abc", "--", *TEST_AGENT], "invalid float value: 'abc'"),
]


@pytest.mark.parametrize(("args", "expected"), CASES)
def test_a_wrong_flag_value_is_a_usage_error_that_says_the_fix(
    args: list[str], expected: str, tmp_path: Path
) -> None:
    done = run_acp2(*args, stdin="", env=isolated_env(tmp_path / "data"), cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert expected in done.stderr
    assert "unexpected error" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr  # no usage dump


def test_url_without_the_remote_extra_is_a_usage_error_naming_the_extra(
    tmp_path: Path,
) -> None:
    """websockets and httpx are made unimportable by modules first on the path."""
    blocked = tmp_path / "blocked"
    blocked.mkdir()
    for name in ("websockets", "httpx"):
        (blocked / f"{name}.py").write_text("raise ImportError('not installed here')\n")
    env = isolated_env(tmp_path / "data")
    env["PYTHONPATH"] = os.pathsep.join([str(blocked), env.get("PYTHONPATH", "")])
    for command in (["run", "hi"], ["chat"]):
        done = run_acp2(
            *command, "--url", "http://127.0.0.1:9/acp", stdin="", env=env, cwd=tmp_path
        )
        assert done.returncode == 2, done.stderr
        assert "--url needs the 'remote' extra" in done.stderr
        assert "pip install -e '.[remote]'" in done.stderr


@pytest.mark.parametrize("command", [["run", "hi"], ["chat"]])
def test_a_stray_stdout_line_of_the_agent_is_reported_once(
    command: list[str], tmp_path: Path
) -> None:
    script = "import time; print('hello', flush=True); time.sleep(30)"
    done = run_acp2(
        *command, "--", sys.executable, "-c", script,
        stdin="hi\n", env=isolated_env(tmp_path / "data"), cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 3
    assert done.stderr.count("invalid frame") + done.stdout.count("invalid frame") == 1


def test_transport_without_url_is_a_usage_error(tmp_path: Path) -> None:
    done = run_acp2(
        "run", "hi", "--transport", "http", "--", *TEST_AGENT,
        stdin="", env=isolated_env(tmp_path / "data"), cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2
    assert "--transport needs --url" in done.stderr


@pytest.mark.parametrize("transport", ["http", "websocket"])
def test_transport_chooses_how_a_remote_agent_is_reached(transport: str, tmp_path: Path) -> None:
    env = isolated_env(tmp_path / "data")
    with serve_process(env) as url:
        for command in (["run", "echo over the wire"], ["chat"]):
            done = run_acp2(
                *command, "--url", url, "--transport", transport,
                stdin="echo over the wire\n", env=env, cwd=tmp_path,
            )  # fmt: skip
            assert done.returncode == 0, done.stderr
            assert "over the wire" in done.stdout

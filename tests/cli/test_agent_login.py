"""acp2's own agent as the ACP registry lists it: ``acp2 agent --model openai`` advertises a
terminal login (the method type the registry's curation requires), ``acp2 agent --login``
takes the key in a terminal and stores it 0600, and the next start reads it. Real
processes over real pipes, and pseudo-terminals (pexpect) for the login."""

from __future__ import annotations

import json
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import ACP2
from pty_helpers import spawn_chat

from helpers.processes import isolated_env, spawn_pty, terminal_env
from helpers.timeouts import PROCESS_TIMEOUT

pexpect = pytest.importorskip("pexpect")
pytest.importorskip("httpx")

KEY = "sk-test-0123456789"


def env_for(tmp_path: Path, *, terminal: bool = False) -> dict[str, str]:
    env = terminal_env(tmp_path / "data") if terminal else isolated_env(tmp_path / "data")
    for name in ("OPENAI_API_KEY", "ACP2_API_KEY", "OPENAI_BASE_URL", "XDG_CONFIG_HOME"):
        env.pop(name, None)
    env["ACP2_CONFIG_DIR"] = str(tmp_path / "config")
    env["PYTHON_KEYRING_BACKEND"] = "keyring.backends.null.Keyring"  # if keyring exists
    return env


def exchange(tmp_path: Path, env: dict[str, str], *messages: dict[str, Any]) -> list[Any]:
    """Send ``messages`` to ``acp2 agent --model openai`` over its stdin; the answers."""
    lines = "".join(json.dumps(m) + "\n" for m in messages)
    done = subprocess.run(
        [*ACP2, "agent", "--model", "openai"],
        input=lines,
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=PROCESS_TIMEOUT,
        check=False,
    )
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def initialize(caps: dict[str, Any], version: int = 2) -> dict[str, Any]:
    if version == 1:
        params = {"protocolVersion": 1, "clientCapabilities": caps}
    else:
        params = {"protocolVersion": 2, "info": {"name": "t", "version": "1"}, "capabilities": caps}
    return {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}


def new_session(cwd: Path) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": str(cwd)}}


def test_without_a_key_the_agent_offers_terminal_login_and_refuses_sessions(
    tmp_path: Path,
) -> None:
    caps = {"auth": {"terminal": {}}}
    init, refused = exchange(tmp_path, env_for(tmp_path), initialize(caps), new_session(tmp_path))
    (method,) = init["result"]["authMethods"]
    assert method["type"] == "terminal"
    assert method["args"] == ["--login"]
    assert method["methodId"] == "acp2-api-key"
    assert refused["error"]["code"] == -32000


def test_a_v1_client_with_the_terminal_auth_meta_sees_the_terminal_method(tmp_path: Path) -> None:
    # What the ACP registry's validator and v1 editors send.
    caps = {"terminal": True, "_meta": {"terminal-auth": True}}
    (init,) = exchange(tmp_path, env_for(tmp_path), initialize(caps, version=1))
    (method,) = init["result"]["authMethods"]
    assert method["type"] == "terminal"
    assert method["args"] == ["--login"]


def test_a_client_that_cannot_run_a_terminal_login_is_not_offered_one(tmp_path: Path) -> None:
    (init,) = exchange(tmp_path, env_for(tmp_path), initialize({}))
    assert "authMethods" not in init["result"]


def log_in(tmp_path: Path, typed: str) -> tuple[int, str]:
    """Run ``acp2 agent --login`` in a terminal, type ``typed``; exit status and output."""
    child = spawn_pty(
        [*ACP2, "agent", "--login"], env=env_for(tmp_path, terminal=True), cwd=tmp_path
    )
    child.expect("API key")
    child.sendline(typed)
    child.expect(pexpect.EOF)
    output = str(child.before)
    child.close()
    return int(child.exitstatus), output


def test_terminal_login_stores_the_key_privately_and_the_next_start_uses_it(
    tmp_path: Path,
) -> None:
    status, output = log_in(tmp_path, KEY)
    assert status == 0
    assert KEY not in output  # not echoed
    stored = tmp_path / "config" / "openai-api-key"
    assert stored.read_text().strip() == KEY
    assert stat.S_IMODE(stored.stat().st_mode) == 0o600
    assert stat.S_IMODE(stored.parent.stat().st_mode) == 0o700
    caps = {"auth": {"terminal": {}}}
    init, session = exchange(tmp_path, env_for(tmp_path), initialize(caps), new_session(tmp_path))
    assert init["result"]["authMethods"][0]["type"] == "terminal"
    assert "sessionId" in session["result"]


def test_an_empty_key_is_not_stored(tmp_path: Path) -> None:
    status, _ = log_in(tmp_path, "")
    assert status == 1
    assert not (tmp_path / "config" / "openai-api-key").exists()


def test_a_stored_key_others_can_read_is_ignored(tmp_path: Path) -> None:
    assert log_in(tmp_path, KEY)[0] == 0
    (tmp_path / "config" / "openai-api-key").chmod(0o644)
    _init, refused = exchange(
        tmp_path, env_for(tmp_path), initialize({"auth": {"terminal": {}}}), new_session(tmp_path)
    )
    assert refused["error"]["code"] == -32000


def test_chat_runs_the_agents_terminal_login_then_starts_it_again(tmp_path: Path) -> None:
    env = env_for(tmp_path, terminal=True)
    agent = [*ACP2, "agent", "--model", "openai"]
    child = spawn_chat(["chat", "--", *agent], env, tmp_path, tmp_path / "log")
    try:
        child.expect("the agent needs you to log in")
        child.expect("Enter an API key in a terminal")
        child.expect(r"log in with \[1-1")
        child.sendline("1")
        child.expect("API key")
        child.sendline(KEY)
        child.expect("the key is stored")
        child.expect("starting the agent again")
        child.expect("connected to")
        child.expect("❯")
        child.sendcontrol("d")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert (tmp_path / "config" / "openai-api-key").read_text().strip() == KEY


def test_a_client_that_replaces_the_arguments_runs_the_same_login(tmp_path: Path) -> None:
    # The registry describes terminal `args` as replacing the distribution's arguments.
    child = spawn_pty([*ACP2, "--login"], env=env_for(tmp_path, terminal=True), cwd=tmp_path)
    child.expect("API key")
    child.sendline(KEY)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert (tmp_path / "config" / "openai-api-key").read_text().strip() == KEY

"""``acp2 agents`` and ``--agent ID`` as a person runs them: real ``acp2`` processes
against a fixture registry served on 127.0.0.1, a real agent started from a binary
archive entry, and ``acp2 chat --agent`` in a pseudo-terminal."""

from __future__ import annotations

import io
import shutil
import subprocess
from pathlib import Path

import pytest
from cli_helpers import ACP2

from acp2.registry.launch import platform_key
from helpers.processes import isolated_env, spawn_pty, terminal_env
from helpers.registry_fake import (
    agent_archive,
    entry,
    index,
    npm_package,
    serve_registry,
    sha256,
)
from helpers.timeouts import PROCESS_TIMEOUT

pytest.importorskip("httpx")

HOSTILE_NAME = "Evil\x1b]0;pwned\x07\x1b[2J Agent"
AGENTS = [
    entry("gemini-like", name="Gemini Like", description="Google-ish coding agent"),
    entry("rusty", description="Writes \x1b[31mRust\x1b[0m", name=HOSTILE_NAME),
]


def env_for(tmp_path: Path, url: str, *, terminal: bool = False) -> dict[str, str]:
    env = terminal_env(tmp_path / "data") if terminal else isolated_env(tmp_path / "data")
    env["ACP2_CACHE_DIR"] = str(tmp_path / "cache")
    env["ACP2_REGISTRY_URL"] = url
    return env


def acp2(tmp_path: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*ACP2, *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=PROCESS_TIMEOUT,
        check=False,
    )


def test_agents_lists_id_name_version_distribution_and_description(tmp_path: Path) -> None:
    with serve_registry({"/registry.json": index(*AGENTS)}) as fake:
        done = acp2(tmp_path, env_for(tmp_path, fake.url()), "agents")
    assert done.returncode == 0, done.stderr
    first, second = done.stdout.splitlines()
    assert first.split()[:4] == ["gemini-like", "Gemini", "Like", "1.2.3"]
    assert "npx" in first
    assert "Google-ish coding agent" in first
    assert second.startswith("rusty")


def test_names_and_descriptions_from_the_registry_reach_the_terminal_sanitized(
    tmp_path: Path,
) -> None:
    with serve_registry({"/registry.json": index(*AGENTS)}) as fake:
        listed = acp2(tmp_path, env_for(tmp_path, fake.url()), "agents")
        shown = acp2(tmp_path, env_for(tmp_path, fake.url()), "agents", "show", "rusty")
    for output in (listed.stdout, shown.stdout):
        assert "\x1b" not in output
        assert "\x07" not in output
    assert "Rust" in shown.stdout


def test_search_words_narrow_the_list_and_no_match_exits_1(tmp_path: Path) -> None:
    with serve_registry({"/registry.json": index(*AGENTS)}) as fake:
        env = env_for(tmp_path, fake.url())
        found = acp2(tmp_path, env, "agents", "google", "CODING")
        none = acp2(tmp_path, env, "agents", "haskell")
    assert [line.split()[0] for line in found.stdout.splitlines()] == ["gemini-like"]
    assert none.returncode == 1
    assert "no agent matches" in none.stderr


def test_show_prints_the_entry_and_how_to_start_it(tmp_path: Path) -> None:
    with serve_registry({"/registry.json": index(*AGENTS)}) as fake:
        done = acp2(tmp_path, env_for(tmp_path, fake.url()), "agents", "show", "gemini-like")
        unknown = acp2(tmp_path, env_for(tmp_path, fake.url()), "agents", "show", "nope")
    assert done.returncode == 0, done.stderr
    assert "Gemini Like (gemini-like) 1.2.3" in done.stdout
    assert "npx: @acp2-tests/gemini-like@1.2.3 --acp" in done.stdout
    assert "acp2 chat --agent gemini-like" in done.stdout
    assert unknown.returncode == 3
    assert "no agent 'nope'" in unknown.stderr


def test_offline_the_cached_index_is_listed_with_its_age(tmp_path: Path) -> None:
    with serve_registry({"/registry.json": index(*AGENTS)}) as fake:
        env = env_for(tmp_path, fake.url())
        assert acp2(tmp_path, env, "agents").returncode == 0
    # The server has stopped: a refresh fails and the cached copy stands in.
    done = acp2(tmp_path, env, "agents", "--refresh")
    assert done.returncode == 0
    assert "gemini-like" in done.stdout
    assert "using the cached index from less than a minute ago" in done.stderr
    offline = acp2(tmp_path, env, "agents", "--offline", "rusty")
    assert offline.returncode == 0
    assert offline.stdout.startswith("rusty")


def test_offline_without_a_cache_is_one_clear_error(tmp_path: Path) -> None:
    with serve_registry({}) as fake:
        url = fake.url()
    done = acp2(tmp_path, env_for(tmp_path, url), "agents")
    assert done.returncode == 3
    assert done.stderr.startswith("acp2 agents: error: could not reach")
    assert "no cached copy" in done.stderr
    assert "Traceback" not in done.stderr


def registry_with_archived_agent() -> tuple[dict[str, bytes], str]:
    archive = agent_archive()
    return {"/agent.tar.gz": archive}, sha256(archive)


def archived_entry(url: str, digest: str) -> dict[str, object]:
    target = {"archive": url, "cmd": "./bin/test-agent", "sha256": digest}
    return entry("archived-agent", distribution={"binary": {platform_key(): target}})


def test_run_with_agent_starts_the_registry_agent_and_prints_its_reply(tmp_path: Path) -> None:
    files, digest = registry_with_archived_agent()
    with serve_registry(files) as fake:
        fake.files["/registry.json"] = index(archived_entry(fake.url("/agent.tar.gz"), digest))
        env = env_for(tmp_path, fake.url())
        done = acp2(tmp_path, env, "run", "--agent", "archived-agent", "echo from the registry")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "from the registry"
    assert "acp2 run: starting " in done.stderr  # the user sees what the registry runs
    assert "bin/test-agent" in done.stderr


def test_agent_and_an_agent_command_together_are_a_usage_error(tmp_path: Path) -> None:
    env = env_for(tmp_path, "http://127.0.0.1:9/registry.json")
    done = acp2(tmp_path, env, "run", "--agent", "x", "hi", "--", "acp2", "test-agent")
    assert done.returncode == 2
    assert "not two" in done.stderr


def test_chat_with_agent_in_a_terminal_talks_to_the_registry_agent(tmp_path: Path) -> None:
    pexpect = pytest.importorskip("pexpect")
    files, digest = registry_with_archived_agent()
    with serve_registry(files) as fake:
        fake.files["/registry.json"] = index(archived_entry(fake.url("/agent.tar.gz"), digest))
        env = env_for(tmp_path, fake.url(), terminal=True)
        child = spawn_pty([*ACP2, "chat", "--agent", "archived-agent"], env=env, cwd=tmp_path)
        try:
            child.logfile_read = open(tmp_path / "pty.log", "w")  # noqa: SIM115
            child.expect("connected to acp2 test agent")
            child.expect("❯")
            child.sendline("echo hello registry")
            child.expect("hello registry")
            child.expect("✓ end_turn")
            child.expect("❯")
            child.sendcontrol("d")
            child.expect(pexpect.EOF)
        finally:
            child.close(force=True)
    assert child.exitstatus == 0


def test_run_with_agent_installs_an_npx_entry_with_npx_and_talks_to_it(tmp_path: Path) -> None:
    # npx is real and installs the package from an npm registry played by the fixture
    # server (offline, on 127.0.0.1); the package's bin starts acp2's test agent.
    if shutil.which("npx") is None:
        pytest.skip("npx is not installed")
    with serve_registry({}) as fake:
        npm = npm_package(fake, "acp2-fixture-agent", "1.0.0")
        store = tmp_path / "npx-agent.sqlite"  # an argument of the entry, passed through
        dist = {"npx": {"package": "acp2-fixture-agent@1.0.0", "args": ["--store", str(store)]}}
        npx_entry = entry("npx-agent", distribution=dist)
        fake.files["/registry.json"] = index(npx_entry)
        env = env_for(tmp_path, fake.url()) | npm | {"npm_config_cache": str(tmp_path / "npm")}
        done = acp2(tmp_path, env, "run", "--agent", "npx-agent", "echo installed by npx")
        assert "/acp2-fixture-agent/-/acp2-fixture-agent-1.0.0.tgz" in fake.requests
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "installed by npx"
    assert store.exists()


def test_agents_in_a_terminal_lists_shows_and_says_when_it_is_offline(tmp_path: Path) -> None:
    pexpect = pytest.importorskip("pexpect")
    with serve_registry({"/registry.json": index(*AGENTS)}) as fake:
        env = env_for(tmp_path, fake.url(), terminal=True)
        listing = spawn_pty([*ACP2, "agents"], env=env, cwd=tmp_path)
        seen = io.StringIO()
        listing.logfile_read = seen
        listing.expect("gemini-like")
        listing.expect("Google-ish coding agent")
        listing.expect(pexpect.EOF)
        shown = spawn_pty([*ACP2, "agents", "show", "rusty"], env=env, cwd=tmp_path)
        shown.logfile_read = seen
        shown.expect(r"\(rusty\) 1\.2\.3")
        shown.expect("start with: acp2 chat --agent rusty")
        shown.expect(pexpect.EOF)
    assert "\x1b" not in seen.getvalue()  # the index's escape sequences never reach it
    assert "rusty" in seen.getvalue()
    offline = spawn_pty([*ACP2, "agents", "--refresh"], env=env, cwd=tmp_path)
    offline.expect("using the cached index from less than a minute ago")
    offline.expect("gemini-like")
    offline.expect(pexpect.EOF)
    offline.close()
    assert offline.exitstatus == 0

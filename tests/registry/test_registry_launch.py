"""From a registry entry to the command that starts it: npx / uvx with the entry's
version, or a binary archive downloaded from a fixture registry on 127.0.0.1, checked,
unpacked privately, cached and run from there."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from acp2.errors import RegistryError
from acp2.registry.launch import platform_key, resolve
from acp2.registry.model import Entry, decode_index
from helpers.registry_fake import agent_archive, entry, index, serve_registry, sha256
from helpers.timeouts import PROCESS_TIMEOUT

pytest.importorskip("httpx")


def one(**fields: object) -> Entry:
    return decode_index(index(entry("some-agent", **fields))).agents[0]


def only_tool(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, *tools: str) -> None:
    """Make ``PATH`` one folder holding just ``tools`` (scripts that do nothing)."""
    folder = tmp_path / "path"
    folder.mkdir()
    for tool in tools:
        (folder / tool).write_text("#!/bin/sh\nexit 0\n")
        (folder / tool).chmod(0o700)
    monkeypatch.setenv("PATH", str(folder))


def test_an_npx_entry_runs_npx_with_its_pinned_package_and_args(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    only_tool(monkeypatch, tmp_path, "npx")
    started = resolve(
        one(distribution={"npx": {"package": "@s/pkg@2.0.0", "args": ["--acp"], "env": {"K": "v"}}})
    )
    assert started.kind == "npx"
    assert started.argv[0].endswith("npx")
    assert started.argv[1:] == ["-y", "@s/pkg@2.0.0", "--acp"]
    assert started.env == {"K": "v"}


def test_a_package_without_a_version_gets_the_entry_version(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    only_tool(monkeypatch, tmp_path, "npx", "uvx")
    assert resolve(one(distribution={"npx": {"package": "@s/pkg"}})).argv[2] == "@s/pkg@1.2.3"
    uvx = resolve(one(distribution={"uvx": {"package": "some-agent", "args": ["acp"]}}))
    assert uvx.kind == "uvx"
    assert uvx.argv[1:] == ["some-agent@1.2.3", "acp"]
    assert resolve(one(distribution={"uvx": {"package": "x==0.1"}})).argv[1] == "x==0.1"


def test_an_entry_nothing_here_can_run_says_what_it_needs(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    only_tool(monkeypatch, tmp_path)
    with pytest.raises(RegistryError, match=r"install Node\.js"):
        resolve(one())
    other = "windows-aarch64" if platform_key() != "windows-aarch64" else "linux-x86_64"
    target = {"archive": "https://example.invalid/a.zip", "cmd": "./a"}
    with pytest.raises(RegistryError, match=f"a {platform_key()} binary"):
        resolve(one(distribution={"binary": {other: target}}))


def binary_entry(url: str, digest: str | None) -> dict[str, object]:
    target: dict[str, object] = {
        "archive": url,
        "cmd": "./bin/test-agent",
        "args": ["--name", "from-registry"],
    }
    if digest is not None:
        target["sha256"] = digest
    return entry("archived", distribution={"binary": {platform_key(): target}})


def test_a_binary_archive_is_downloaded_checked_unpacked_privately_and_reused(
    tmp_path: Path,
) -> None:
    archive = agent_archive()
    files = {"/a.tar.gz": archive}
    with serve_registry(files) as fake:
        item = decode_index(index(binary_entry(fake.url("/a.tar.gz"), sha256(archive)))).agents[0]
        first = resolve(item, cache=tmp_path / "cache")
        second = resolve(item, cache=tmp_path / "cache")
        assert fake.requests == ["/a.tar.gz"]
    assert first == second
    assert first.kind == "binary"
    program = Path(first.argv[0])
    assert program.name == "test-agent"
    assert first.argv[1:] == ["--name", "from-registry"]
    assert stat.S_IMODE(program.stat().st_mode) == 0o700
    assert not stat.S_IMODE(program.parent.stat().st_mode) & 0o077
    done = subprocess.run(
        [*first.argv[:1], "--help"],
        capture_output=True,
        text=True,
        timeout=PROCESS_TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def test_an_archive_without_a_checksum_is_still_unpacked_safely(tmp_path: Path) -> None:
    with serve_registry({"/a.tar.gz": agent_archive()}) as fake:
        item = decode_index(index(binary_entry(fake.url("/a.tar.gz"), None))).agents[0]
        assert resolve(item, cache=tmp_path).kind == "binary"


def test_every_folder_of_the_agent_cache_is_private_even_with_umask_0(tmp_path: Path) -> None:
    old = os.umask(0)
    try:
        with serve_registry({"/a.tar.gz": agent_archive()}) as fake:
            item = decode_index(index(binary_entry(fake.url("/a.tar.gz"), None))).agents[0]
            started = resolve(item, cache=tmp_path / "cache")
    finally:
        os.umask(old)
    folder = Path(started.argv[0]).parent
    while folder != tmp_path:
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder
        folder = folder.parent


def test_a_new_sha256_in_the_entry_fetches_and_replaces_the_cached_unpack(tmp_path: Path) -> None:
    first, second = agent_archive(), agent_archive() + b"\0" * 1024  # gzip ignores the tail
    with serve_registry({"/1.tar.gz": first, "/2.tar.gz": second}) as fake:
        for path, data in (("/1.tar.gz", first), ("/2.tar.gz", second), ("/2.tar.gz", second)):
            item = decode_index(index(binary_entry(fake.url(path), sha256(data)))).agents[0]
            started = resolve(item, cache=tmp_path / "cache")
        assert fake.requests == ["/1.tar.gz", "/2.tar.gz"]
    stamp = Path(started.argv[0]).parents[1] / ".acp2-archive-sha256"
    assert stamp.read_text() == sha256(second)

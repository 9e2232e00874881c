"""A hostile ACP registry: wrong checksums, archives that try to write outside their
folder or plant links and devices, commands that point outside, an unpack place others
can write, and an index too large to read. Each is refused before anything runs, and
nothing partial is left in the cache."""

from __future__ import annotations

import io
import os
import tarfile
import zipfile
from pathlib import Path

import pytest

from acp2.errors import RegistryError, UnsafeDownload
from acp2.registry.index import fetch_bytes, load_index
from acp2.registry.launch import platform_key, resolve
from acp2.registry.model import MAX_INDEX_BYTES, decode_index
from helpers.registry_fake import (
    agent_archive,
    entry,
    file_member,
    index,
    serve_registry,
    sha256,
    tar_archive,
)

pytest.importorskip("httpx")


def launch_archive(tmp_path: Path, archive: bytes, **target: str) -> None:
    """Resolve a binary entry whose archive is ``archive``, served on 127.0.0.1."""
    with serve_registry({"/a": archive}) as fake:
        spec = {"archive": fake.url("/a"), "cmd": "./bin/test-agent", **target}
        item = entry("hostile", distribution={"binary": {platform_key(): spec}})
        resolve(decode_index(index(item)).agents[0], cache=tmp_path / "cache")


def leftovers(tmp_path: Path) -> list[str]:
    """Every file left in the agent cache (the unpack folder must not be there)."""
    root = tmp_path / "cache"
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def test_an_archive_with_a_wrong_sha256_is_deleted_and_not_run(tmp_path: Path) -> None:
    with pytest.raises(UnsafeDownload, match="sha256"):
        launch_archive(tmp_path, agent_archive(), sha256="0" * 64)
    assert leftovers(tmp_path) == []


def test_a_matching_sha256_in_capitals_is_accepted(tmp_path: Path) -> None:
    archive = agent_archive()
    launch_archive(tmp_path, archive, sha256=sha256(archive).upper())


def link(name: str, target: str, kind: bytes) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = target
    return info


TAR_ATTACKS = {
    "dot-dot": [file_member("../escaped")],
    "dot-dot-deep": [file_member("bin/../../escaped")],
    "absolute": [file_member("/tmp/acp2-escaped")],
    "symlink-out": [link("bin/test-agent", "/bin/sh", tarfile.SYMTYPE)],
    "symlink-in": [link("bin/x", "test-agent", tarfile.SYMTYPE)],
    "hardlink": [link("bin/test-agent", "/etc/passwd", tarfile.LNKTYPE)],
    "fifo": [link("bin/fifo", "", tarfile.FIFOTYPE)],
    "device": [link("bin/dev", "", tarfile.CHRTYPE)],
    "twice": [file_member("bin/test-agent"), file_member("bin/test-agent")],
}


@pytest.mark.parametrize("attack", sorted(TAR_ATTACKS))
def test_a_tar_member_outside_the_folder_or_not_a_plain_file_is_refused(
    tmp_path: Path, attack: str
) -> None:
    archive = tar_archive(TAR_ATTACKS[attack], {"bin/test-agent": b"#!/bin/sh\n"})
    with pytest.raises(UnsafeDownload):
        launch_archive(tmp_path, archive)
    assert leftovers(tmp_path) == []
    assert not (tmp_path / "cache" / "escaped").exists()


def zip_archive(name: str, unix_mode: int = 0o100755) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        info = zipfile.ZipInfo(name)
        info.external_attr = unix_mode << 16
        zf.writestr(info, b"#!/bin/sh\n")
    return buffer.getvalue()


@pytest.mark.parametrize(
    ("name", "mode"),
    [
        ("../escaped", 0o100755),
        ("/abs", 0o100644),
        ("bin\\..\\..\\x", 0o100644),
        ("C:/x", 0o100644),
        ("bin/test-agent", 0o120777),
    ],
    ids=["dot-dot", "absolute", "backslash", "drive", "symlink"],
)
def test_a_zip_member_outside_the_folder_or_a_link_is_refused(
    tmp_path: Path, name: str, mode: int
) -> None:
    with pytest.raises(UnsafeDownload):
        launch_archive(tmp_path, zip_archive(name, mode))
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("cmd", ["../../../../bin/sh", "/bin/sh", "bin/missing"])
def test_a_command_outside_the_archive_or_missing_is_refused(tmp_path: Path, cmd: str) -> None:
    with pytest.raises(RegistryError, match=r"command|no "):
        launch_archive(tmp_path, agent_archive(), cmd=cmd)


def test_an_agent_cache_writable_by_others_is_never_run_from(tmp_path: Path) -> None:
    (tmp_path / "cache").mkdir()
    os.chmod(tmp_path / "cache", 0o777)
    with pytest.raises(UnsafeDownload, match="writable by other users"):
        launch_archive(tmp_path, agent_archive())


def test_a_folder_of_the_cache_made_writable_after_the_unpack_is_noticed(tmp_path: Path) -> None:
    launch_archive(tmp_path, agent_archive())
    (bin_dir,) = (tmp_path / "cache").rglob("bin")
    os.chmod(bin_dir, 0o777)
    with pytest.raises(UnsafeDownload, match="writable by other users"):
        launch_archive(tmp_path, agent_archive())


def test_a_huge_index_is_refused_before_it_is_read_whole(tmp_path: Path) -> None:
    huge = b'{"version": "1.0.0", "agents": [' + b" " * MAX_INDEX_BYTES + b"]}"
    with serve_registry({"/registry.json": huge}) as fake:
        with pytest.raises(RegistryError, match="larger than"):
            fetch_bytes(fake.url(), MAX_INDEX_BYTES)
        with pytest.raises(RegistryError, match="larger than"):
            load_index(fake.url(), cache=tmp_path)
    with pytest.raises(RegistryError, match="larger than"):
        decode_index(huge)


def test_an_index_of_many_entries_keeps_a_bounded_number() -> None:
    from acp2.registry.model import MAX_AGENTS

    many = index(*(entry(f"a{i}") for i in range(MAX_AGENTS + 5)))
    decoded = decode_index(many)
    assert len(decoded.agents) == MAX_AGENTS


@pytest.mark.parametrize(
    "name",
    [
        "PATH",
        "LD_PRELOAD",
        "DYLD_INSERT_LIBRARIES",
        "NODE_OPTIONS",
        "npm_config_registry",
        "PYTHONPATH",
        "UV_INDEX_URL",
        "ACP2_CACHE_DIR",
        "HOME",
    ],
)
def test_an_entry_whose_env_would_change_which_code_runs_is_dropped(name: str) -> None:
    bad = entry("sneaky", distribution={"npx": {"package": "p@1.0.0", "env": {name: "/tmp/x"}}})
    good = entry("plain", distribution={"npx": {"package": "p@1.0.0", "env": {"PATHS_SHOWN": "1"}}})
    decoded = decode_index(index(bad, good))
    assert [e.id for e in decoded.agents] == ["plain"]
    assert decoded.dropped == 1

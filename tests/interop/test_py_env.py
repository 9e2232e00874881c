"""The Python SDK installer: cache folder names, reuse, and a failure that says why."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from . import py_env
from .conftest import REQUIRE_ENV, skip_or_fail


def test_the_venv_folder_is_named_by_the_lockfile_and_the_interpreter(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("ACP2_INTEROP_CACHE", str(tmp_path))
    tag = f"cp{sys.version_info.major}{sys.version_info.minor}"

    for lock in ("v1", "v2"):
        digest = py_env.lockfile_digest(lock)
        assert len(digest) == 64
        assert py_env.install_dir(lock) == tmp_path / f"py-{digest}-{tag}"
    assert py_env.lockfile_digest("v1") != py_env.lockfile_digest("v2")


def test_the_lockfiles_pin_every_package_with_a_hash() -> None:
    for lock, version in py_env.VERSIONS.items():
        text = py_env.LOCKFILES[lock].read_text()
        requirements = [line for line in text.splitlines() if "==" in line]
        assert f"agent-client-protocol=={version} \\" in requirements
        assert all(line.endswith(" \\") for line in requirements), requirements
        assert "://" not in text  # no index or registry URL in the lockfile


def test_a_failed_install_says_why_and_leaves_no_folder(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    broken = tmp_path / "requirements-broken.txt"
    broken.write_text("this is not a requirement !!!\n")
    monkeypatch.setitem(py_env.LOCKFILES, "v2", broken)
    monkeypatch.setenv("ACP2_INTEROP_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv(REQUIRE_ENV, raising=False)

    with pytest.raises(py_env.PythonSdkUnavailable, match="pip install") as exc:
        py_env.ensure_installed("v2")
    with pytest.raises(pytest.skip.Exception, match="pip install"):
        skip_or_fail(str(exc.value))
    leftovers = [p.name for p in (tmp_path / "cache").iterdir() if not p.name.endswith(".lock")]
    assert leftovers == []


@pytest.mark.interop
def test_an_installed_sdk_is_reused(py_sdk_v2: Path) -> None:
    folder = py_sdk_v2.parents[1]
    stamp = (folder / py_env.STAMP).stat().st_mtime_ns

    assert py_env.ensure_installed("v2") == py_sdk_v2
    assert (folder / py_env.STAMP).stat().st_mtime_ns == stamp
    assert py_env.is_installed(folder)

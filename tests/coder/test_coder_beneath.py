"""Opening below a root without following symlinks: both code paths (openat2 and the
component walk with O_NOFOLLOW), each forced in turn."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from acp2 import beneath
from acp2.beneath import BeneathError, open_beneath, openat2_available

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX descriptors")


@pytest.fixture(params=["openat2", "walk"])
def path_kind(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "openat2" and not openat2_available():
        pytest.skip("this kernel has no openat2")
    monkeypatch.setattr(beneath, "USE_OPENAT2", request.param == "openat2")
    return str(request.param)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "root" / "a" / "b").mkdir(parents=True)
    (tmp_path / "root" / "a" / "b" / "f.txt").write_text("inside\n")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "f.txt").write_text("OUTSIDE\n")
    (tmp_path / "root" / "dirlink").symlink_to(tmp_path / "outside")
    (tmp_path / "root" / "filelink").symlink_to(tmp_path / "outside" / "f.txt")
    (tmp_path / "root" / "a" / "innerlink").symlink_to("b")
    return tmp_path / "root"


def read(root: Path, rel: str) -> str:
    fd = open_beneath(str(root), rel, os.O_RDONLY)
    with os.fdopen(fd) as handle:
        return handle.read()


def test_a_nested_file_opens_below_the_root(tree: Path, path_kind: str) -> None:
    assert read(tree, "a/b/f.txt") == "inside\n"
    assert read(tree, "./a//b/f.txt") == "inside\n"


@pytest.mark.parametrize("rel", ["dirlink/f.txt", "filelink", "a/innerlink/f.txt"])
def test_any_symlink_on_the_way_is_refused_even_one_that_stays_inside(
    tree: Path, path_kind: str, rel: str
) -> None:
    with pytest.raises(BeneathError):
        read(tree, rel)


@pytest.mark.parametrize("rel", ["../outside/f.txt", "a/../../outside/f.txt"])
def test_dot_dot_is_refused(tree: Path, path_kind: str, rel: str) -> None:
    with pytest.raises(BeneathError):
        read(tree, rel)


def test_an_absolute_path_is_refused(tree: Path, path_kind: str) -> None:
    with pytest.raises(BeneathError):
        read(tree, str(tree / "a" / "b" / "f.txt"))


def test_a_missing_file_is_file_not_found(tree: Path, path_kind: str) -> None:
    with pytest.raises(FileNotFoundError):
        read(tree, "a/nope.txt")


def test_a_new_file_is_created_exclusively(tree: Path, path_kind: str) -> None:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL
    os.close(open_beneath(str(tree), "a/new.txt", flags, 0o600))
    assert (tree / "a" / "new.txt").stat().st_mode & 0o777 == 0o600
    with pytest.raises(FileExistsError):
        open_beneath(str(tree), "a/new.txt", flags)


def test_the_root_itself_opens_as_a_directory(tree: Path, path_kind: str) -> None:
    fd = open_beneath(str(tree), ".", os.O_RDONLY | os.O_DIRECTORY)
    try:
        assert "a" in os.listdir(fd)
    finally:
        os.close(fd)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux")
def test_openat2_is_used_on_kernels_that_have_it() -> None:
    release = tuple(int(p) for p in os.uname().release.split(".")[:2] if p.isdigit())
    if release < (5, 6):
        pytest.skip("kernel older than 5.6")
    assert openat2_available()

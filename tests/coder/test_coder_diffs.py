"""Diff content: structured changes plus a git_patch with absolute paths (DF-01..DF-05)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from acp2.coder.diffs import file_diff, git_patch, quote_path
from acp2.schema import Diff, DiffAddChange, DiffModifyChange
from acp2.schema.codec import decode, encode


def test_a_modification_has_one_modify_change_and_a_matching_patch() -> None:
    diff = file_diff("/w/a.py", "x = 1\ny = 2\n", "x = 1\ny = 3\n")
    assert diff.changes == [DiffModifyChange(path="/w/a.py", file_type="text")]
    assert diff.patch is not None
    assert diff.patch.format == "git_patch"
    assert diff.patch.text == (
        "diff --git /w/a.py /w/a.py\n"
        "--- /w/a.py\n"
        "+++ /w/a.py\n"
        "@@ -1,2 +1,2 @@\n"
        " x = 1\n"
        "-y = 2\n"
        "+y = 3\n"
    )


def test_an_added_file_uses_dev_null_and_a_new_file_mode() -> None:
    diff = file_diff("/w/new.txt", None, "hello\n")
    assert diff.changes == [DiffAddChange(path="/w/new.txt", file_type="text")]
    assert diff.patch is not None
    assert diff.patch.text.splitlines()[:4] == [
        "diff --git /w/new.txt /w/new.txt",
        "new file mode 100644",
        "--- /dev/null",
        "+++ /w/new.txt",
    ]


def test_patches_never_use_a_or_b_prefixes() -> None:
    text = git_patch("/abs/path/f.py", "1\n", "2\n")
    assert " a/" not in text
    assert " b/" not in text
    assert all(
        line.split(" ", 1)[1].startswith("/")
        for line in text.splitlines()
        if line.startswith(("--- ", "+++ "))
    )


def test_a_missing_final_newline_is_marked() -> None:
    text = git_patch("/w/f", "a\nb", "a\nc")
    assert "-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n" in text


@pytest.mark.parametrize(
    ("path", "quoted"),
    [
        ("/w/plain.py", "/w/plain.py"),
        ("/w/with space.py", "/w/with space.py"),
        ('/w/qu"ote', '"/w/qu\\"ote"'),
        ("/w/tab\there", '"/w/tab\\there"'),
        ("/w/é.py", '"/w/\\303\\251.py"'),
    ],
)
def test_unusual_names_are_quoted_like_git(path: str, quoted: str) -> None:
    assert quote_path(path) == quoted


def test_the_diff_round_trips_through_the_wire_codec() -> None:
    diff = file_diff("/w/a.py", "1\n", "2\n")
    assert decode(encode(diff), Diff) == diff


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_git_applies_the_generated_patches(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("a\nb\nc\n")
    modified = str(tmp_path / "f.txt")
    added = str(tmp_path / "new file.txt")
    patch = git_patch(modified, "a\nb\nc\n", "a\nB\nc\nd") + git_patch(added, None, "x\n")
    (tmp_path / "p.diff").write_text(patch)
    subprocess.run(
        ["git", "apply", "--unsafe-paths", "-p0", "p.diff"], cwd=tmp_path, check=True, timeout=30
    )
    assert (tmp_path / "f.txt").read_text() == "a\nB\nc\nd"
    assert (tmp_path / "new file.txt").read_text() == "x\n"

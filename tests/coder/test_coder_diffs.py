"""Diff content: structured changes plus a git_patch with absolute paths (DF-01..DF-05)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from acp2.coder.diffs import file_diff, git_patch, quote_path
from acp2.schema import Diff, DiffAddChange, DiffModifyChange
from acp2.schema.codec import decode, encode
from helpers import timeouts


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
        ["git", "apply", "--unsafe-paths", "-p0", "p.diff"],
        cwd=tmp_path,
        check=True,
        timeout=timeouts.SCENARIO_TIMEOUT,
    )
    assert (tmp_path / "f.txt").read_text() == "a\nB\nc\nd"
    assert (tmp_path / "new file.txt").read_text() == "x\n"


# -- large files: only the changed region is compared (issue 10, §3) --------------------


def apply_patch(old: str, patch: str) -> str:
    """Apply a one-file unified diff from git_patch to ``old`` (a small reference applier)."""
    source = old.splitlines(keepends=True)
    lines = patch.splitlines(keepends=True)
    out: list[str] = []
    at = index = 0
    while index < len(lines) and not lines[index].startswith("@@ "):
        index += 1
    while index < len(lines):
        first, _, count = lines[index].split()[1][1:].partition(",")
        start = int(first) - (0 if count == "0" else 1)
        out.extend(source[at:start])
        at, index, kept = start, index + 1, False
        while index < len(lines) and not lines[index].startswith("@@ "):
            line, index = lines[index], index + 1
            if line.startswith("\\"):
                if kept:  # the line just kept had no newline in the file
                    out[-1] = out[-1][:-1]
                continue
            at += line[0] in " -"
            kept = line[0] in " +"
            if kept:
                out.append(line[1:])
    return "".join(out + source[at:])


texts = st.lists(st.sampled_from(["a\n", "b\n", "c\n", "d\n"]), max_size=30).map("".join)


@given(
    old=texts, new=texts, tail=st.sampled_from(["", "x"]), max_lines=st.sampled_from([0, 4, 10_000])
)
def test_every_patch_applies_and_gives_the_new_text(
    old: str, new: str, tail: str, max_lines: int
) -> None:
    new += tail
    patch = git_patch("/w/f", old, new, max_lines)
    assert apply_patch(old, patch) == new


def test_an_edit_in_a_large_file_is_one_small_hunk() -> None:
    old = "".join(f"line {n}\n" for n in range(200_000))
    new = old.replace("line 100000\n", "changed\n")
    patch = git_patch("/w/big", old, new)
    assert patch.count("\n@@ ") == 1
    assert "@@ -99998,7 +99998,7 @@\n" in patch
    assert "-line 100000\n+changed\n" in patch


def test_a_changed_region_over_the_limit_is_one_replaced_block() -> None:
    old = "keep\n" + "".join(f"o{n}\n" for n in range(50)) + "end\n"
    new = "keep\n" + "".join(f"n{n}\n" for n in range(50)) + "end\n"
    patch = git_patch("/w/f", old, new, max_lines=10)
    body = patch.split("@@ -1,52 +1,52 @@\n", 1)[1]
    assert (
        body
        == " keep\n"
        + "".join(f"-o{n}\n" for n in range(50))
        + "".join(f"+n{n}\n" for n in range(50))
        + " end\n"
    )

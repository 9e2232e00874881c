"""The file, search and edit tools: behaviour, atomic writes, .gitignore, diff content."""

from __future__ import annotations

import json
import os
from pathlib import Path

import anyio
import pytest

from acp2.coder.tools import Sandbox, Toolbox, ToolError
from acp2.coder.tools.files import apply_change, list_files, prepare_edit, read_file
from acp2.coder.tools.gitignore import parse_gitignore, walk
from acp2.coder.tools.search import search
from acp2.schema import Diff, DiffAddChange, DiffModifyChange
from helpers import timeouts


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "core.py").write_text("def add(a, b):\n    return a - b\n")
    (tmp_path / "pkg" / "util.py").write_text("VALUE = 1\nVALUE = 1\n")
    (tmp_path / "README.md").write_text("# Demo\n")
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "out.py").write_text("def add(): pass\n")
    (tmp_path / "notes.log").write_text("def add in a log\n")
    (tmp_path / ".gitignore").write_text("build/\n*.log\n")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    return tmp_path


def box(root: Path) -> Toolbox:
    return Toolbox(Sandbox(str(root)))


async def execute(root: Path, name: str, **args: object) -> tuple[bool, str, list[object]]:
    prepared = box(root).prepare(name, json.dumps(args))
    with anyio.fail_after(timeouts.TIMEOUT):
        run = await prepared.execute(None)  # type: ignore[arg-type]
    return run.ok, run.output, run.content


def test_read_file_returns_the_text_and_windows_by_lines(project: Path) -> None:
    sandbox = Sandbox(str(project))
    assert read_file(sandbox, "pkg/core.py") == "def add(a, b):\n    return a - b\n"
    window = read_file(sandbox, "pkg/core.py", offset=2, limit=1)
    assert window.startswith("    return a - b\n")
    assert "lines 2-2 of 2" in window


@pytest.mark.parametrize(
    ("path", "message"),
    [("missing.py", "does not exist"), ("pkg", "is a directory")],
)
def test_read_file_explains_what_is_wrong(project: Path, path: str, message: str) -> None:
    with pytest.raises(ToolError, match=message):
        read_file(Sandbox(str(project)), path)


def test_binary_files_are_not_read_as_text(project: Path) -> None:
    (project / "blob.bin").write_bytes(b"\x00\x01\x02")
    with pytest.raises(ToolError, match=r"binary|UTF-8"):
        read_file(Sandbox(str(project)), "blob.bin")


def test_list_files_globs_and_skips_ignored_files_and_git(project: Path) -> None:
    sandbox = Sandbox(str(project))
    assert list_files(sandbox) == [".gitignore", "README.md", "pkg/core.py", "pkg/util.py"]
    assert list_files(sandbox, "**/*.py") == ["pkg/core.py", "pkg/util.py"]
    assert list_files(sandbox, "*.py", "pkg") == ["pkg/core.py", "pkg/util.py"]
    assert list_files(sandbox, "*.md") == ["README.md"]


def test_search_finds_lines_and_respects_gitignore(project: Path) -> None:
    sandbox = Sandbox(str(project))
    assert search(sandbox, r"def \w+\(") == ["pkg/core.py:1: def add(a, b):"]
    assert search(sandbox, "value", ignore_case=True, glob="pkg/*.py") == [
        "pkg/util.py:1: VALUE = 1",
        "pkg/util.py:2: VALUE = 1",
    ]
    assert search(sandbox, "return", path="pkg/core.py") == ["pkg/core.py:2:     return a - b"]
    with pytest.raises(ToolError, match="invalid regular expression"):
        search(sandbox, "(")


@pytest.mark.parametrize(
    ("rules", "path", "is_dir", "ignored"),
    [
        ("*.log", "a/b/c.log", False, True),
        ("build/", "build", True, True),
        ("build/", "build", False, False),
        ("/top.txt", "top.txt", False, True),
        ("/top.txt", "sub/top.txt", False, False),
        ("doc/*.md", "doc/a.md", False, True),
        ("doc/*.md", "x/doc/a.md", False, False),
        ("**/cache", "a/b/cache", True, True),
        ("logs/**", "logs/x/y", False, True),
        ("a/**/z", "a/b/c/z", False, True),
        ("a/**/z", "a/z", False, True),
        ("*.py\n!keep.py", "keep.py", False, False),
        ("file[0-9].txt", "file3.txt", False, True),
        ("file[!0-9].txt", "file3.txt", False, False),
        ("# comment\n\n", "comment", False, False),
        ("\\#hash", "#hash", False, True),
        ("?.c", "ab.c", False, False),
    ],
)
def test_the_gitignore_matcher_follows_git_rules(
    rules: str, path: str, is_dir: bool, ignored: bool
) -> None:
    from acp2.coder.tools.gitignore import IgnoreRules

    matcher = IgnoreRules().extend("", parse_gitignore(rules))
    assert matcher.ignored(path, is_dir) is ignored


def test_nested_gitignore_files_apply_below_their_directory(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / ".gitignore").write_text("*.tmp\n")
    (tmp_path / "a" / "b" / "x.tmp").write_text("")
    (tmp_path / "a" / "b" / "y.txt").write_text("")
    (tmp_path / "z.tmp").write_text("")
    assert [rel for _, rel in walk(str(tmp_path))] == ["a/.gitignore", "a/b/y.txt", "z.tmp"]


@pytest.mark.anyio
async def test_edit_file_replaces_one_exact_string_and_reports_a_diff(project: Path) -> None:
    ok, output, content = await execute(
        project, "edit_file", path="pkg/core.py", old_string="a - b", new_string="a + b"
    )
    assert ok
    assert output == "Edit pkg/core.py: done."
    assert (project / "pkg" / "core.py").read_text() == "def add(a, b):\n    return a + b\n"
    (diff,) = content
    assert isinstance(diff, Diff)
    real = str((project / "pkg" / "core.py").resolve())
    assert diff.changes == [DiffModifyChange(path=real, file_type="text")]
    assert diff.patch is not None
    assert diff.patch.format == "git_patch"
    assert f"diff --git {real} {real}\n" in diff.patch.text
    assert "-    return a - b\n+    return a + b\n" in diff.patch.text


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("VALUE = 1", "VALUE = 2", "occurs 2 times"),
        ("nope", "x", "was not found"),
        ("VALUE", "VALUE", "are the same"),
        ("", "x", "is empty"),
    ],
)
def test_edit_file_refuses_ambiguous_or_missing_strings(
    project: Path, old: str, new: str, message: str
) -> None:
    with pytest.raises(ToolError, match=message):
        prepare_edit(Sandbox(str(project)), "pkg/util.py", old, new)


def test_replace_all_edits_every_occurrence(project: Path) -> None:
    sandbox = Sandbox(str(project))
    apply_change(sandbox, prepare_edit(sandbox, "pkg/util.py", "1", "2", replace_all=True))
    assert (project / "pkg" / "util.py").read_text() == "VALUE = 2\nVALUE = 2\n"


@pytest.mark.anyio
async def test_write_file_creates_directories_and_reports_an_added_file(project: Path) -> None:
    ok, _, content = await execute(project, "write_file", path="new/dir/f.txt", content="hi\n")
    assert ok
    assert (project / "new" / "dir" / "f.txt").read_text() == "hi\n"
    (diff,) = content
    assert isinstance(diff, Diff)
    assert isinstance(diff.changes[0], DiffAddChange)
    assert diff.patch is not None
    assert "--- /dev/null\n" in diff.patch.text


def test_writes_are_atomic_and_keep_the_file_mode(project: Path) -> None:
    target = project / "pkg" / "core.py"
    os.chmod(target, 0o755)
    inode = target.stat().st_ino
    sandbox = Sandbox(str(project))
    apply_change(sandbox, prepare_edit(sandbox, "pkg/core.py", "a - b", "a + b"))
    assert target.stat().st_ino != inode  # replaced by rename, never rewritten in place
    assert target.stat().st_mode & 0o777 == 0o755
    assert sorted(p.name for p in (project / "pkg").iterdir()) == ["core.py", "util.py"]


def test_a_file_changed_since_the_edit_was_prepared_is_not_overwritten(project: Path) -> None:
    sandbox = Sandbox(str(project))
    change = prepare_edit(sandbox, "pkg/core.py", "a - b", "a + b")
    (project / "pkg" / "core.py").write_text("someone else's text\n")
    with pytest.raises(ToolError, match="changed since"):
        apply_change(sandbox, change)
    assert (project / "pkg" / "core.py").read_text() == "someone else's text\n"


def test_crlf_line_endings_survive_an_edit(project: Path) -> None:
    (project / "win.txt").write_bytes(b"one\r\ntwo\r\n")
    sandbox = Sandbox(str(project))
    apply_change(sandbox, prepare_edit(sandbox, "win.txt", "two", "2"))
    assert (project / "win.txt").read_bytes() == b"one\r\n2\r\n"


@pytest.mark.parametrize(
    ("name", "args", "message"),
    [
        ("read_file", "{}", "`path` must be a string"),
        ("read_file", "[1]", "must be a JSON object"),
        ("read_file", "{oops", "not valid JSON"),
        ("read_file", '{"path": "a", "limit": "x"}', "`limit` must be an integer"),
        ("fly", "{}", "unknown tool"),
    ],
)
def test_bad_arguments_are_explained(project: Path, name: str, args: str, message: str) -> None:
    with pytest.raises(ToolError, match=message):
        box(project).prepare(name, args)


def test_tool_titles_kinds_and_locations_describe_the_call(project: Path) -> None:
    prepared = box(project).prepare("read_file", json.dumps({"path": "pkg/core.py"}))
    assert (prepared.title, prepared.kind) == ("Read pkg/core.py", "read")
    assert prepared.locations == (str(project / "pkg" / "core.py"),)
    command = box(project).prepare("run_command", json.dumps({"command": "ls -l"}))
    assert (command.title, command.kind, command.command) == ("ls -l", "execute", "ls -l")


# -- bounded reads and edits (issue 10, §3) -------------------------------------------


def test_a_window_says_whether_the_file_goes_on(project: Path) -> None:
    (project / "many.txt").write_text("".join(f"line {n}\n" for n in range(1, 11)))
    sandbox = Sandbox(str(project))
    first = read_file(sandbox, "many.txt", limit=2)
    assert (
        first
        == "line 1\nline 2\n\n[showing lines 1-2; the file goes on, use offset/limit for more]"
    )
    last = read_file(sandbox, "many.txt", offset=9, limit=5)
    assert last == "line 9\nline 10\n\n[showing lines 9-10 of 10; use offset/limit for more]"
    assert "offset 20 is past the end" in read_file(sandbox, "many.txt", offset=20)
    assert read_file(sandbox, "many.txt", limit=10).endswith("line 10\n")


def test_a_read_stops_at_the_character_budget(project: Path) -> None:
    from acp2.coder.tools.limits import FileLimits

    (project / "wide.txt").write_text("x" * 50 + "\n" + "y" * 50 + "\n")
    text = read_file(Sandbox(str(project)), "wide.txt", limits=FileLimits(read_chars=60))
    assert text.startswith("x" * 50 + "\n" + "y" * 9 + "\n[showing lines 1-2")


def test_a_file_that_is_not_utf8_is_refused(project: Path) -> None:
    (project / "latin1.txt").write_bytes(b"caf\xe9\n")
    with pytest.raises(ToolError, match="not UTF-8"):
        read_file(Sandbox(str(project)), "latin1.txt")


@pytest.mark.parametrize("kind", ["fifo", "socket"])
def test_only_regular_files_are_read_or_edited(project: Path, kind: str) -> None:
    import socket

    from acp2.coder.tools.files import prepare_write

    path = project / "special"
    if kind == "fifo":
        os.mkfifo(path)
    else:
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(path))
    sandbox = Sandbox(str(project))
    with pytest.raises(ToolError, match="not a regular file"):
        read_file(sandbox, "special")
    with pytest.raises(ToolError, match="not a regular file"):
        prepare_edit(sandbox, "special", "a", "b")
    with pytest.raises(ToolError, match="not a regular file"):
        prepare_write(sandbox, "special", "x")
    assert search(sandbox, "x", "special") == []


def test_edits_and_writes_over_the_size_limit_are_refused(project: Path) -> None:
    from acp2.coder.tools.files import prepare_write
    from acp2.coder.tools.limits import FileLimits

    small = FileLimits(edit_bytes=100)
    (project / "big.txt").write_text("x" * 101)
    sandbox = Sandbox(str(project))
    with pytest.raises(ToolError, match=r"big.txt is 0.0 MiB; files over 0.0 MiB cannot be"):
        prepare_edit(sandbox, "big.txt", "x", "y", limits=small)
    with pytest.raises(ToolError, match="would be over"):
        prepare_write(sandbox, "fresh.txt", "z" * 101, limits=small)
    with pytest.raises(ToolError, match="would be over"):
        prepare_edit(sandbox, "README.md", "#", "#" * 200, limits=small)


@pytest.mark.anyio
async def test_preparing_in_a_thread_gives_the_same_call(project: Path) -> None:
    args = json.dumps({"path": "pkg/core.py", "old_string": "a - b", "new_string": "a + b"})
    with anyio.fail_after(timeouts.TIMEOUT):
        prepared = await box(project).prepare_async("edit_file", args)
    assert prepared.title == "Edit pkg/core.py"
    assert prepared.preview is not None


# -- search engines ---------------------------------------------------------------------


def engines() -> list[str]:
    from acp2.coder.tools.search import re2_module

    return ["re", "re2"] if re2_module() is not None else ["re"]


@pytest.mark.parametrize("engine", engines())
def test_both_engines_find_the_same_lines(project: Path, engine: str) -> None:
    sandbox = Sandbox(str(project))
    assert search(sandbox, r"def \w+\(a", engine=engine) == ["pkg/core.py:1: def add(a, b):"]
    assert search(sandbox, "DEMO", ignore_case=True, engine=engine) == ["README.md:1: # Demo"]


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("pattern", "hit"),
    [(r"(?<=return )a", "pkg/core.py:2:     return a - b"), (r"^(\w)\1", "pkg/dup.txt:1: aab")],
)
async def test_patterns_re2_cannot_run_still_work_in_the_child_process(
    project: Path, pattern: str, hit: str
) -> None:
    from acp2.coder.tools.search import search_async

    (project / "pkg" / "dup.txt").write_text("aab\n")
    with anyio.fail_after(timeouts.SCENARIO_TIMEOUT):
        hits = await search_async(Sandbox(str(project)), pattern)
    assert hits == [hit]


@pytest.mark.anyio
async def test_a_search_past_its_time_limit_is_stopped_with_a_tool_error(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from acp2.coder.tools.limits import FileLimits
    from acp2.coder.tools.search import search_async

    monkeypatch.setenv("ACP2_SEARCH_ENGINE", "re")  # Python's re, in the child process
    (project / "crafted.txt").write_text("a" * 60 + "!\n")
    with (
        anyio.fail_after(timeouts.SCENARIO_TIMEOUT),
        pytest.raises(ToolError, match=r"longer than 1 s and was stopped"),
    ):
        await search_async(Sandbox(str(project)), r"^(a+)+$", limits=FileLimits(search_seconds=1))


@pytest.mark.anyio
async def test_a_bad_pattern_is_refused_before_running(project: Path) -> None:
    with pytest.raises(ToolError, match="invalid regular expression"):
        box(project).prepare("search", json.dumps({"pattern": "(unclosed"}))

"""Every way out of the session's root set is refused, and nothing changes on disk."""

from __future__ import annotations

import json
import os
from pathlib import Path

import anyio
import pytest
from coder_helpers import snapshot

from acp2.coder.tools import Sandbox, SandboxError, Toolbox, ToolError
from helpers.timeouts import TIMEOUT

SECRET = "SECRET contents\n"


@pytest.fixture
def world(tmp_path: Path) -> Path:
    """tmp/work (cwd), tmp/extra (additional root), tmp/outside, tmp/work-evil, and links."""
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text(SECRET)
    (tmp_path / "work-evil").mkdir()
    (tmp_path / "work-evil" / "x.txt").write_text(SECRET)
    work = tmp_path / "work"
    (work / "sub").mkdir(parents=True)
    (work / "a.txt").write_text("hello\n")
    (work / "link_dir").symlink_to(tmp_path / "outside")
    (work / "link_file").symlink_to(tmp_path / "outside" / "secret.txt")
    (work / "dangling").symlink_to(tmp_path / "outside" / "new.txt")
    (work / "sub" / "up").symlink_to("../..")
    (work / "inner_link").symlink_to(work / "a.txt")
    (tmp_path / "extra").mkdir()
    (tmp_path / "extra" / "notes.txt").write_text("notes\n")
    assert os.path.islink(work / "link_dir")
    return tmp_path


def nothing_in_home() -> bool:
    return not Path("~/acp2-escape-test.txt").expanduser().exists()


def toolbox(world: Path) -> Toolbox:
    return Toolbox(Sandbox(str(world / "work"), [str(world / "extra")]))


ESCAPES = [
    "../outside/secret.txt",
    "{world}/outside/secret.txt",
    "sub/../../outside/secret.txt",
    "link_dir/secret.txt",
    "link_file",
    "dangling",
    "link_dir/new.txt",
    "sub/up/outside/secret.txt",
    "../work-evil/x.txt",
    "{world}/work-evil/x.txt",
    "~/acp2-escape-test.txt",
    "/etc/passwd",
    "..",
    "/",
]


def attempts(path: str) -> list[tuple[str, dict[str, object]]]:
    return [
        ("read_file", {"path": path}),
        ("write_file", {"path": path, "content": "pwned\n"}),
        ("edit_file", {"path": path, "old_string": "SECRET", "new_string": "pwned"}),
        ("list_files", {"path": path}),
        ("search", {"pattern": "SECRET", "path": path}),
    ]


@pytest.mark.anyio
@pytest.mark.parametrize("template", ESCAPES)
async def test_no_tool_can_reach_outside_the_roots(world: Path, template: str) -> None:
    path = template.format(world=world)
    before = snapshot(world)
    box = toolbox(world)
    for name, args in attempts(path):
        try:
            prepared = box.prepare(name, _json(args))
        except ToolError:
            continue  # refused up front (the message is checked below)
        # Only harmless cases may get this far: none of them may show the secret.
        with anyio.fail_after(TIMEOUT):
            run = await prepared.execute(None)  # type: ignore[arg-type]
        assert "SECRET" not in run.output, (name, path, run.output)
        assert name in ("list_files", "search"), (name, path)
    assert snapshot(world) == before
    assert nothing_in_home()


@pytest.mark.parametrize("template", ESCAPES)
def test_the_sandbox_refuses_every_escape_with_a_clear_message(world: Path, template: str) -> None:
    sandbox = Sandbox(str(world / "work"), [str(world / "extra")])
    with pytest.raises(SandboxError, match="outside the workspace"):
        sandbox.resolve(template.format(world=world))


@pytest.mark.parametrize("bad", ["", "   ", "a\x00b"])
def test_empty_and_nul_paths_are_refused(world: Path, bad: str) -> None:
    with pytest.raises(SandboxError):
        Sandbox(str(world / "work")).resolve(bad)


def test_paths_inside_any_root_are_allowed(world: Path) -> None:
    sandbox = Sandbox(str(world / "work"), [str(world / "extra")])
    assert sandbox.resolve("a.txt").relative == "a.txt"
    assert sandbox.resolve("sub/../a.txt").real == str((world / "work" / "a.txt").resolve())
    assert sandbox.resolve("inner_link").real == str((world / "work" / "a.txt").resolve())
    extra = sandbox.resolve(str(world / "extra" / "notes.txt"))
    assert extra.relative == str(world / "extra" / "notes.txt")
    assert sandbox.resolve("new/dir/file.txt").shown == str(world / "work/new/dir/file.txt")


def test_a_root_reached_through_a_symlink_is_still_a_root(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "f.txt").write_text("x")
    (tmp_path / "alias").symlink_to(tmp_path / "real")
    sandbox = Sandbox(str(tmp_path / "alias"))
    assert sandbox.resolve("f.txt").real == str((tmp_path / "real" / "f.txt").resolve())


def test_search_and_listing_do_not_follow_links_out(world: Path) -> None:
    sandbox = Sandbox(str(world / "work"))
    from acp2.coder.tools.files import list_files
    from acp2.coder.tools.search import search

    assert search(sandbox, "SECRET") == []
    listed = list_files(sandbox)
    assert not any(p.startswith("link_dir/") for p in listed)


@pytest.mark.anyio
async def test_writes_inside_an_additional_directory_are_allowed(world: Path) -> None:
    box = toolbox(world)
    target = world / "extra" / "notes.txt"
    args = {"path": str(target), "old_string": "notes", "new_string": "more notes"}
    prepared = box.prepare("edit_file", _json(args))
    with anyio.fail_after(TIMEOUT):
        run = await prepared.execute(None)  # type: ignore[arg-type]
    assert run.ok
    assert target.read_text() == "more notes\n"


@pytest.mark.anyio
async def test_a_link_swapped_in_after_permission_is_caught_before_writing(world: Path) -> None:
    box = toolbox(world)
    target = world / "work" / "a.txt"
    prepared = box.prepare("write_file", _json({"path": "a.txt", "content": "new\n"}))
    target.unlink()
    target.symlink_to(world / "outside" / "secret.txt")  # the race: swapped while asking
    before = snapshot(world)
    with anyio.fail_after(TIMEOUT), pytest.raises(ToolError):
        await prepared.execute(None)  # type: ignore[arg-type]
    assert snapshot(world) == before
    assert (world / "outside" / "secret.txt").read_text() == SECRET


def _json(args: dict[str, object]) -> str:
    return json.dumps(args)


# -- protected paths (issue 10, §5): .git and friends run commands later -------------


@pytest.mark.parametrize(
    "path",
    [
        ".git/config",
        ".git/hooks/pre-commit",
        "sub/.git/config",
        ".GIT/config",
        ".envrc",
        ".vscode/tasks.json",
        ".idea/workspace.xml",
        ".hg/hgrc",
        "git_alias/config",
    ],
)
def test_writes_under_protected_paths_are_refused_with_a_reason(world: Path, path: str) -> None:
    work = world / "work"
    (work / ".git").mkdir()
    (work / "git_alias").symlink_to(work / ".git")
    sandbox = Sandbox(str(work))
    with pytest.raises(SandboxError, match=r"protected path .*could run commands"):
        sandbox.resolve_for_write(path)


def test_protected_paths_can_still_be_read(world: Path) -> None:
    from acp2.coder.tools.files import read_file

    (world / "work" / ".git").mkdir()
    (world / "work" / ".git" / "config").write_text("[core]\n")
    assert read_file(Sandbox(str(world / "work")), ".git/config") == "[core]\n"


def test_names_that_only_look_protected_are_writable(world: Path) -> None:
    sandbox = Sandbox(str(world / "work"))
    for path in (".gitignore", ".github/workflows/x.yml", "my.git/config", "docs/.envrc.md"):
        assert sandbox.resolve_for_write(path).relative == path


def test_the_protected_list_is_configurable(world: Path) -> None:
    open_sandbox = Sandbox(str(world / "work"), protected=())
    assert open_sandbox.resolve_for_write(".git/config").relative == ".git/config"
    strict = Sandbox(str(world / "work"), protected=["secrets/keys"])
    with pytest.raises(SandboxError, match="'secrets/keys'"):
        strict.resolve_for_write("app/secrets/keys/id.pem")
    assert strict.resolve_for_write("app/secrets/other").relative == "app/secrets/other"


# -- every OSError becomes a tool error (issue 10, §6) ---------------------------------


def test_a_failing_realpath_is_a_sandbox_error(
    world: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(_path: str) -> str:
        raise OSError(22, "Invalid argument")  # what a concurrent swap made realpath raise

    monkeypatch.setattr(os.path, "realpath", broken)
    sandbox = Sandbox.__new__(Sandbox)
    sandbox.cwd, sandbox.roots, sandbox.protected = str(world / "work"), (str(world),), ()
    with pytest.raises(SandboxError, match="cannot be resolved: Invalid argument"):
        sandbox.resolve("a.txt")


@pytest.mark.parametrize("walk_only", [False, True])
def test_a_directory_swapped_for_a_link_after_the_check_is_not_followed(
    world: Path, walk_only: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    from acp2 import beneath
    from acp2.coder.tools.files import apply_change, prepare_write, read_file

    monkeypatch.setattr(beneath, "USE_OPENAT2", not walk_only)
    work = world / "work"
    (work / "d").mkdir()
    (work / "d" / "secret.txt").write_text("inside\n")
    (world / "outside" / "d").mkdir()
    sandbox = Sandbox(str(work))
    target = sandbox.resolve("d/secret.txt")  # checked while d is a directory...
    change = prepare_write(sandbox, "d/new.txt", "x\n")
    (work / "d").rename(work / "d.real")
    (work / "d").symlink_to(world / "outside")  # ...then swapped for a link out
    with pytest.raises(SandboxError, match="changed while"):
        os.close(sandbox.open_file(target))
    with pytest.raises(SandboxError, match="changed while"):  # a write's parent directory
        os.close(sandbox.open_dir(str(work / "d"), "d", create=True))
    with pytest.raises(ToolError):
        apply_change(sandbox, change)
    with pytest.raises(SandboxError):
        read_file(sandbox, "d/secret.txt")
    assert not (world / "outside" / "new.txt").exists()
    assert not (world / "outside" / "d" / "new.txt").exists()

"""Attack: planting a git hook outside ``.git`` (issue 24, item 7). With
``core.hooksPath=.husky`` an approved ``edit_file`` of ``.husky/pre-commit`` kept its mode
0755 and ran, unsandboxed, at the user's next commit; lefthook's and pre-commit's
configuration files name commands the same way. Now the repository's ``core.hooksPath``
(read from its configuration, without running git), ``.husky``, lefthook's files and
``.pre-commit-config.yaml`` are refused like ``.git``: before any permission is asked."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest

from helpers import timeouts
from hostile.coder_attack_helpers import (
    TIMEOUT,
    Recorder,
    agent_for,
    coder_session,
    serve,
    text_reply,
    told_to_model,
    tool_reply,
)

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(shutil.which("git") is None, reason="needs git"),
]


def git(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeouts.SCENARIO_TIMEOUT,
        check=False,
    )


def make_repo(root: Path, hooks_path: str) -> Path:
    """A repository whose hooks live in ``hooks_path``, with an executable pre-commit."""
    root.mkdir()
    git(root, "init", "-q")
    git(root, "config", "core.hooksPath", hooks_path)
    hooks = root / hooks_path
    hooks.mkdir(parents=True)
    (hooks / "pre-commit").write_text("#!/bin/sh\nexit 0\n")
    (hooks / "pre-commit").chmod(0o755)
    (root / "f.txt").write_text("x\n")
    git(root, "add", "f.txt")
    return root


async def run_attacks(repo: Path, attacks: list[tuple[str, str, dict[str, Any]]]) -> list[str]:
    """Let the model try ``attacks`` with every permission granted; return what it was told."""
    policy = Recorder("allow_always")
    with serve() as fake, anyio.fail_after(TIMEOUT):
        fake.add(tool_reply(attacks), text_reply("done"))
        async with coder_session(agent_for(fake), repo, permissions=policy) as session:
            assert await (await session.prompt("set up hooks")).wait() == "end_turn"
            statuses = {c.status for c in session.state.tool_calls.values()}
    assert statuses == {"failed"}
    assert not policy.requests  # refused before asking: "allow always" cannot open it
    return told_to_model(fake)


async def test_the_model_cannot_change_a_hook_under_core_hooks_path(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", ".husky")
    pwned = tmp_path / "PWNED"
    hook = repo / ".husky" / "pre-commit"
    before = hook.read_text()
    attacks = [
        (
            "h1",
            "edit_file",
            {"path": ".husky/pre-commit", "old_string": "exit 0", "new_string": f"touch {pwned}"},
        ),
        ("h2", "write_file", {"path": ".husky/post-commit", "content": f"touch {pwned}\n"}),
        ("h3", "write_file", {"path": str(hook), "content": f"touch {pwned}\n"}),
    ]
    told = await run_attacks(repo, attacks)
    assert len(told) == len(attacks)
    assert all("protected path" in t and "could run commands" in t for t in told), told
    assert hook.read_text() == before
    assert not (repo / ".husky" / "post-commit").exists()
    git(repo, "commit", "-q", "-m", "c")
    assert not pwned.exists()


async def test_a_custom_hooks_path_is_read_from_the_repository_config(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", "tools/githooks")
    attacks = [
        ("c1", "write_file", {"path": "tools/githooks/pre-commit", "content": "touch x\n"}),
        ("c2", "write_file", {"path": "tools/githooks/pre-push", "content": "touch x\n"}),
        ("c3", "write_file", {"path": "TOOLS/../tools/githooks/pre-rebase", "content": "x"}),
    ]
    told = await run_attacks(repo, attacks)
    assert all("core.hooksPath (tools/githooks)" in t for t in told[:2]), told
    assert not (repo / "tools" / "githooks" / "pre-push").exists()
    assert (repo / "tools" / "githooks" / "pre-commit").read_text() == "#!/bin/sh\nexit 0\n"


async def test_hook_manager_configuration_files_are_protected(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", ".husky")
    names = [
        "lefthook.yml",
        ".lefthook.yml",
        "lefthook-local.yml",
        ".lefthook/pre-commit/x.sh",
        ".pre-commit-config.yaml",
        "pkg/.pre-commit-config.yaml",
        ".husky/_/h",
        ".huskyrc",
        "lefthook.toml",
        ".config/lefthook.yml",
    ]
    attacks = [
        (f"m{i}", "write_file", {"path": name, "content": "pre-commit:\n  run: x\n"})
        for i, name in enumerate(names)
    ]
    told = await run_attacks(repo, attacks)
    assert len(told) == len(names)
    assert all("protected path" in t for t in told), told
    assert not any((repo / name).exists() for name in names)


async def test_files_that_only_look_like_hooks_are_still_written(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", ".husky")
    calls = [
        ("w1", "write_file", {"path": "src/hooks/useThing.ts", "content": "export {}\n"}),
        ("w2", "write_file", {"path": "docs/husky.md", "content": "hooks\n"}),
        ("w3", "write_file", {"path": "pre-commit-notes.yaml", "content": "a: 1\n"}),
    ]
    with serve() as fake, anyio.fail_after(TIMEOUT):
        fake.add(tool_reply(calls), text_reply("done"))
        async with coder_session(agent_for(fake), repo) as session:
            assert await (await session.prompt("write")).wait() == "end_turn"
    assert (repo / "src" / "hooks" / "useThing.ts").read_text() == "export {}\n"
    assert (repo / "docs" / "husky.md").read_text() == "hooks\n"
    assert (repo / "pre-commit-notes.yaml").read_text() == "a: 1\n"


async def test_a_linked_worktree_uses_its_repositorys_hooks_path(tmp_path: Path) -> None:
    main = make_repo(tmp_path / "main", ".githooks")
    git(main, "commit", "-q", "-m", "first")
    linked = tmp_path / "linked"
    assert git(main, "worktree", "add", "-q", str(linked)).returncode == 0
    assert (linked / ".git").is_file()  # "gitdir: ...": the config is in the main repository
    told = await run_attacks(
        linked, [("t1", "write_file", {"path": ".githooks/post-checkout", "content": "x\n"})]
    )
    assert "core.hooksPath (.githooks)" in told[0]
    assert not (linked / ".githooks" / "post-checkout").exists()


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        ("[core]\n\thooksPath = .githooks\n", ".githooks"),
        ('[CORE]\n  HOOKSPATH = "my hooks" ; a comment\n', "my hooks"),
        ("[core]\nhooksPath=a # comment\n[core]\nhookspath = b\n", "b"),
        ('[remote "core"]\n\thooksPath = x\n[core]\n\tbare = false\n', None),
        ("[core] hooksPath = inline\n", "inline"),
        ("[alias]\n\thooksPath = no\n", None),
    ],
)
def test_the_hooks_path_is_read_as_git_reads_it(config: str, expected: str | None) -> None:
    from acp2.coder.tools.hookpaths import _hooks_path_in

    assert _hooks_path_in(config) == expected

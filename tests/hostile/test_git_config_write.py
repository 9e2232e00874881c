"""Attack: writing version-control metadata to run commands later (issue 10, §5). Before,
an ``edit_file`` on ``.git/config`` setting ``core.fsmonitor`` ran a command at the next
``git status``, and ``.git/hooks`` was writable the same way. Now every write under a
protected path (``.git``, ``.hg``, ``.svn``, ``.bzr``, ``.jj``, ``.envrc``, ``.vscode``,
``.idea``; configurable) is refused with a clear tool error before any permission is
asked, whatever path (or symlink) leads there."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

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
        ["git", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeouts.SCENARIO_TIMEOUT,
        check=True,
    )


async def test_the_model_cannot_plant_an_fsmonitor_or_a_hook(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    config = (repo / ".git" / "config").read_text()
    (repo / "alias").symlink_to(repo / ".git")
    pwned = tmp_path / "PWNED"
    fsmonitor = f"[core]\n\tfsmonitor = touch {pwned}; false\n"
    attacks = [
        (
            "g1",
            "edit_file",
            {"path": ".git/config", "old_string": "[core]", "new_string": fsmonitor},
        ),
        ("g2", "write_file", {"path": ".git/hooks/pre-commit", "content": f"touch {pwned}\n"}),
        ("g3", "write_file", {"path": "alias/config", "content": fsmonitor}),
        ("g4", "write_file", {"path": ".GIT/config", "content": fsmonitor}),
        ("g5", "write_file", {"path": str(repo / ".git" / "info" / "x"), "content": "x"}),
    ]
    policy = Recorder("allow_always")
    with serve() as fake, anyio.fail_after(TIMEOUT):
        fake.add(tool_reply(attacks), text_reply("done"))
        async with coder_session(agent_for(fake), repo, permissions=policy) as session:
            assert await (await session.prompt("speed up git")).wait() == "end_turn"
            statuses = {c.status for c in session.state.tool_calls.values()}
    told = told_to_model(fake)
    assert len(told) == len(attacks)
    assert all("protected path '.git'" in t and "could run commands" in t for t in told), told
    assert statuses == {"failed"}
    assert not policy.requests  # refused before asking: "allow always" cannot open it
    assert (repo / ".git" / "config").read_text() == config
    assert not (repo / ".git" / "hooks" / "pre-commit").exists()
    git(repo, "status")
    assert not pwned.exists()


async def test_ordinary_files_next_to_git_are_still_written(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    calls = [
        ("w1", "write_file", {"path": ".gitignore", "content": "build/\n"}),
        ("w2", "write_file", {"path": ".github/workflows/ci.yml", "content": "on: push\n"}),
    ]
    with serve() as fake, anyio.fail_after(TIMEOUT):
        fake.add(tool_reply(calls), text_reply("done"))
        async with coder_session(agent_for(fake), tmp_path) as session:
            assert await (await session.prompt("write")).wait() == "end_turn"
    assert (tmp_path / ".gitignore").read_text() == "build/\n"
    assert (tmp_path / ".github" / "workflows" / "ci.yml").read_text() == "on: push\n"

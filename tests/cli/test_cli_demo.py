"""``acp2 demo`` end to end: the scripted coding agent fixes the sample project's test."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import isolated_env, run_acp2

from acp2.coder.sample import sample_files
from helpers import timeouts

PROMPT = "fix the failing test\n"
BUGGY = "    for index in range(1, len(values)):"
FIXED = "    for index in range(len(values)):"


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return isolated_env(tmp_path / "data")


def unittest_passes(project: Path) -> bool:
    """Run the sample project's own tests (stdlib unittest) in ``project``."""
    done = subprocess.run(
        [sys.executable, "-m", "unittest"],
        cwd=project,
        capture_output=True,
        timeout=timeouts.RUN_TIMEOUT,
        check=False,
    )
    return done.returncode == 0


def test_echo_fix_the_failing_test_into_acp2_demo(env: dict[str, str], tmp_path: Path) -> None:
    """The README's promise, exactly as written: ``echo "fix the failing test" | acp2 demo``."""
    done = run_acp2("demo", stdin=PROMPT, env=env, cwd=tmp_path, timeout=120)
    where = re.search(r"^sample project copied to (.+)$", done.stdout, re.MULTILINE)
    assert where is not None, done.stdout + done.stderr
    project = Path(where[1])
    try:
        assert done.returncode == 0, done.stdout + done.stderr
        lines = done.stdout.splitlines()
        for expected in (
            "> fix the failing test",
            "[plan]",
            "  [x] Run the tests",  # the final plan, every step done
            "[edit] Edit mathkit/series.py (completed)",
            f"    -{BUGGY}",
            f"    +{FIXED}",
            "[execute] python3 -m unittest -v (completed)",
            "    $ python3 -m unittest -v",
            "    OK",
            "    [exit 0]",
            "[stop: end_turn]",
        ):
            assert expected in lines, expected
        assert any(line.startswith("usage: ctx ") for line in lines)
        assert any(line.startswith("(thinking) ") for line in lines)
        assert unittest_passes(project)
    finally:
        shutil.rmtree(project, ignore_errors=True)


def test_with_permission_denied_the_file_is_unchanged(env: dict[str, str], tmp_path: Path) -> None:
    project = tmp_path / "project"
    done = run_acp2(
        "demo",
        "--dir",
        str(project),
        "--permission",
        "deny",
        "--pace",
        "0",
        stdin=PROMPT,
        env=env,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "[permission] Edit mathkit/series.py? -> rejected: Reject" in done.stdout
    assert "[edit] Edit mathkit/series.py (failed)" in done.stdout
    assert done.stdout.splitlines()[-2] == "[stop: end_turn]"
    series = (project / "mathkit" / "series.py").read_text(encoding="utf-8")
    assert series == sample_files()["mathkit/series.py"]
    assert BUGGY in series
    assert not unittest_passes(project)


def test_dir_receives_a_fresh_copy_and_the_end_says_where_it_is(
    env: dict[str, str], tmp_path: Path
) -> None:
    project = tmp_path / "copy"
    done = run_acp2(
        "demo", "--dir", str(project), "--pace", "0", stdin=PROMPT, env=env, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert f"sample project copied to {project}" in done.stdout
    assert done.stdout.splitlines()[-1].startswith(f"the project is in {project}")
    assert unittest_passes(project)


def test_here_works_in_the_current_directory_without_copying(
    env: dict[str, str], tmp_path: Path
) -> None:
    (tmp_path / "notes.py").write_text("x = 1\n", encoding="utf-8")
    done = run_acp2("demo", "--here", "--pace", "0", stdin="look around\n", env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"working in {tmp_path}" in done.stdout
    assert "notes.py" in done.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data", "notes.py"]


def test_a_dir_that_is_not_empty_is_refused(env: dict[str, str], tmp_path: Path) -> None:
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "file.txt").write_text("mine", encoding="utf-8")
    done = run_acp2("demo", "--dir", str(tmp_path / "busy"), stdin=PROMPT, env=env, cwd=tmp_path)
    assert done.returncode == 2
    assert "not empty" in done.stderr

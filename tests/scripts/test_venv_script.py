"""``scripts/demo.sh`` and ``scripts/test.sh`` run pip only when needed (``scripts/venv.sh``).

The scripts run for real, in a copy of the checkout's scripts and ``pyproject.toml``,
with a stand-in ``python`` that records how it was called (creating a real venv and
running pip would take a minute and need the network): the stamp logic is what is
tested -- pip on the first run, not when nothing changed, again after ``pyproject.toml``
changed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from helpers import timeouts

ROOT = Path(__file__).resolve().parents[2]

FAKE_PYTHON = """#!/usr/bin/env bash
echo "python $*" >> "$CALLS"
if [ "$1 $2" = "-m venv" ]; then
  mkdir -p "$3/bin"
  cp "$0" "$3/bin/python"
  printf '#!/usr/bin/env bash\\necho "acp2 $*" >> "$CALLS"\\n' > "$3/bin/acp2"
  chmod +x "$3/bin/acp2"
fi
"""


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A copy of the scripts and pyproject.toml, and a stand-in python on ``$PYTHON``."""
    (tmp_path / "scripts").mkdir()
    for name in ("demo.sh", "venv.sh"):
        shutil.copy(ROOT / "scripts" / name, tmp_path / "scripts" / name)
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    fake = tmp_path / "fake-python"
    fake.write_text(FAKE_PYTHON)
    fake.chmod(0o755)
    return tmp_path


def demo(checkout: Path, *args: str) -> list[str]:
    """Run ``scripts/demo.sh ARGS``; return the calls it made (and forget them)."""
    calls = checkout / "calls.log"
    env = {**os.environ, "PYTHON": str(checkout / "fake-python"), "CALLS": str(calls)}
    subprocess.run(
        ["bash", str(checkout / "scripts" / "demo.sh"), *args],
        env=env,
        check=True,
        timeout=timeouts.RUN_TIMEOUT,
        capture_output=True,
    )
    lines = calls.read_text().splitlines()
    calls.unlink()
    return lines


def pip_runs(calls: list[str]) -> list[str]:
    return [call for call in calls if call.startswith("python -m pip install")]


def test_the_first_run_creates_the_venv_installs_and_starts_the_demo(checkout: Path) -> None:
    calls = demo(checkout, "--plain")
    assert calls[0] == "python -m venv .venv"
    assert pip_runs(calls) == ["python -m pip install -q --disable-pip-version-check -e .[all]"]
    assert calls[-1] == "acp2 demo --plain"


def test_a_second_run_with_nothing_changed_skips_pip(checkout: Path) -> None:
    demo(checkout)
    assert demo(checkout, "--plain") == ["acp2 demo --plain"]


def test_a_changed_pyproject_runs_pip_again(checkout: Path) -> None:
    demo(checkout)
    with (checkout / "pyproject.toml").open("a") as f:
        f.write("\n# a new dependency\n")
    assert len(pip_runs(demo(checkout))) == 1
    assert pip_runs(demo(checkout)) == []


def test_a_venv_set_up_by_test_sh_is_good_enough_for_the_demo(checkout: Path) -> None:
    """test.sh installs the dev extras, a superset of what the demo needs."""
    demo(checkout)
    (checkout / ".venv" / ".acp2-installed-all").rename(checkout / ".venv" / ".acp2-installed-dev")
    assert pip_runs(demo(checkout)) == []


def test_test_sh_uses_the_same_stamped_setup() -> None:
    text = (ROOT / "scripts" / "test.sh").read_text()
    assert "source scripts/venv.sh" in text
    assert "ensure_venv dev" in text
    assert "pip install" not in text

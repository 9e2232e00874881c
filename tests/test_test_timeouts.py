"""The shared test-wait bound (tests/helpers/timeouts.py) and its scale variable."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from helpers import timeouts


def test_no_scale_or_an_empty_one_means_factor_one() -> None:
    assert timeouts.scale(None) == 1.0
    assert timeouts.scale("  ") == 1.0


def test_the_scale_multiplies_the_bound() -> None:
    assert timeouts.scale("2.5") == 2.5


@pytest.mark.parametrize("value", ["0", "-1", "inf", "nan", "slow"])
def test_a_scale_that_is_not_a_positive_number_is_refused(value: str) -> None:
    with pytest.raises(ValueError, match=timeouts.SCALE_ENV):
        timeouts.scale(value)


def test_the_longer_bounds_are_named_multiples_of_the_single_wait() -> None:
    assert timeouts.PROCESS_TIMEOUT == 2 * timeouts.TIMEOUT
    assert timeouts.SCENARIO_TIMEOUT == 3 * timeouts.TIMEOUT
    assert timeouts.RUN_TIMEOUT == 6 * timeouts.TIMEOUT
    assert timeouts.TIMEOUT == 10.0 * timeouts.SCALE


_LITERAL_BOUND = re.compile(r"\bfail_after\(\s*\d+(?:\.\d+)?\s*[,)]")


def test_no_test_bounds_a_wait_by_a_number_of_its_own() -> None:
    """Every ``fail_after`` in the suite names one of the bounds in
    helpers/timeouts.py, so ``ACP2_TEST_TIMEOUT_SCALE`` stretches them all."""
    root = Path(__file__).parent
    found = [
        f"{path.relative_to(root)}:{number}: {line.strip()}"
        for path in sorted(root.rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if _LITERAL_BOUND.search(line)
    ]
    assert found == []


_NUMBER_BOUND = re.compile(r"^\s*\w*TIMEOUT\w*\s*(?::\s*\w+\s*)?=\s*\d+(?:\.\d+)?\s*(?:#.*)?$")

#: Bounds that are not waits of a test, with why they stay plain numbers.
_NOT_WAITS = {
    "hostile/test_serve_slow_sockets.py": "server settings under test, not waits",
    "interop/node_env.py": "one npm install of the interop peers, bounded by the network",
    "interop/py_env.py": "one pip install of the interop peers, bounded by the network",
    "real_agents/install.py": "one install of a real agent, bounded by the network",
    "real_agents/test_v2_adapters.py": "one adapter check run, bounded by the network",
}


def test_no_module_names_a_timeout_of_its_own() -> None:
    """A module-level ``TIMEOUT = 10`` bypasses the scale as a literal bound does: every
    wait bound is one of helpers/timeouts.py (or a multiple of one)."""
    root = Path(__file__).parent
    found = [
        f"{path.relative_to(root)}:{number}: {line.strip()}"
        for path in sorted(root.rglob("*.py"))
        if path.relative_to(root).as_posix() not in {"helpers/timeouts.py", *_NOT_WAITS}
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if _NUMBER_BOUND.match(line)
    ]
    assert found == []

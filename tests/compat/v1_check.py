"""Assertions that translated frames are valid: v1 ones against the vendored v1 schema,
v2 ones against both v2 drafts (tests/schema_validation.py)."""

from __future__ import annotations

from typing import Any

from v1_testdata import v1_errors

from acp2.schema.codec import to_builtins
from schema_validation import draft_schema


def assert_v1(model: Any, definition: str) -> dict[str, Any]:
    """Assert ``model`` encodes to a valid v1 ``definition``; return the JSON value."""
    value = to_builtins(model)
    assert v1_errors(value, definition) == [], value
    result: dict[str, Any] = value
    return result


def assert_v2(model: Any, definition: str, drafts: tuple[str, ...] = ("aug", "nov")) -> Any:
    """Assert ``model`` encodes to a valid v2 ``definition`` under each draft."""
    value = to_builtins(model)
    for draft in drafts:
        assert draft_schema(draft).check(definition, value, draft) == [], value
    return value


def assert_v1_updates(notes: list[Any]) -> list[dict[str, Any]]:
    """Assert each v1 ``session/update`` params is valid; return their ``update`` objects."""
    return [assert_v1(note, "SessionNotification")["update"] for note in notes]

"""Accepted form content checked against the requested schema (EL-04, EL-05, EL-14)."""

from __future__ import annotations

from typing import Any

import pytest

from acp2.agent.elicit_check import content_problems
from acp2.schema import ElicitationSchema
from acp2.schema._base import convert


def _schema(**properties: Any) -> ElicitationSchema:
    checked: ElicitationSchema = convert(
        {"type": "object", "properties": properties}, ElicitationSchema
    )
    return checked


@pytest.mark.parametrize(
    ("prop", "good", "bad", "problem"),
    [
        ({"type": "string", "maxLength": 3}, "abc", "abcd", "allows at most 3 characters"),
        ({"type": "string", "pattern": "^[a-z]+$"}, "abc", "ABC", "does not match the pattern"),
        ({"type": "string", "format": "email"}, "a@b.c", "ab.c", "is not a valid email"),
        ({"type": "string", "format": "date"}, "2026-12-01", "12/01/2026", "is not a valid date"),
        ({"type": "string", "format": "uri"}, "https://x.y", "x.y", "is not a valid uri"),
        (
            {"type": "string", "oneOf": [{"const": "a", "title": "A"}]},
            "a",
            "b",
            "is not one of the offered choices",
        ),
        ({"type": "number", "maximum": 1.5}, 1.5, 2, "must be at most 1.5"),
        ({"type": "number"}, 2, True, "must be a number"),
        ({"type": "integer"}, 3, 3.5, "must be an integer"),
        ({"type": "boolean"}, False, "false", "must be true or false"),
        (
            {"type": "array", "items": {"type": "string", "enum": ["x", "y"]}, "maxItems": 1},
            ["x"],
            ["x", "y"],
            "allows at most 1 choices",
        ),
        (
            {"type": "array", "items": {"anyOf": [{"const": "x", "title": "X"}]}},
            ["x"],
            ["z"],
            "holds a choice that was not offered",
        ),
        ({"type": "array", "items": {"type": "string", "enum": ["x"]}}, [], "x", "list of"),
    ],
    ids=[
        "max-length",
        "pattern",
        "email",
        "date",
        "uri",
        "one-of",
        "maximum",
        "bool-is-not-a-number",
        "integer",
        "boolean",
        "max-items",
        "any-of",
        "not-a-list",
    ],
)
def test_a_value_that_fits_passes_and_one_that_does_not_is_named(
    prop: Any, good: Any, bad: Any, problem: str
) -> None:
    schema = _schema(field=prop)
    assert content_problems(schema, {"field": good}) == []
    (found,) = content_problems(schema, {"field": bad})
    assert found.startswith("`field` ")
    assert problem in found


def test_an_unknown_format_is_only_an_annotation() -> None:
    schema = _schema(field={"type": "string", "format": "_color"})
    assert content_problems(schema, {"field": "anything"}) == []


def test_a_pattern_python_cannot_compile_does_not_reject_the_answer() -> None:
    schema = _schema(field={"type": "string", "pattern": "(?<name"})
    assert content_problems(schema, {"field": "x"}) == []


def test_a_custom_property_type_accepts_any_json_value() -> None:
    schema = _schema(field={"type": "_location"})
    assert content_problems(schema, {"field": {"lat": 1, "lon": [2]}}) == []

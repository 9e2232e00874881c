"""Filling in an elicitation form (acp2.ui.form): fields from the schema, every answer
checked against its field (EL-04, EL-05), unknown field types never shown (EL-13)."""

from __future__ import annotations

import importlib.util
from typing import Any

import msgspec
import pytest
from msgspec import UNSET

from acp2.schema.codec import decode
from acp2.schema.elicitation_schema import ElicitationSchema
from acp2.ui.form import MAX_TRIES, FieldError, Unfillable, fill, form_fields, parse

pytestmark = pytest.mark.anyio


def schema(properties: dict[str, Any], required: list[str] | None = None) -> ElicitationSchema:
    raw = {"type": "object", "properties": properties, "required": required or []}
    return decode(msgspec.json.encode(raw), ElicitationSchema)


def one(prop: dict[str, Any], required: bool = False) -> Any:
    return form_fields(schema({"f": prop}, ["f"] if required else None))[0]


def test_labels_help_and_defaults_come_from_the_schema_sanitized() -> None:
    field = one({"type": "string", "title": "Na\x1b[31mme", "description": "who", "default": "x"})
    assert field.label == "Name" or "\x1b" not in field.label
    assert field.help == "who"
    assert field.default_text == "x"


def test_el05_a_required_field_cannot_be_left_empty_an_optional_one_is_left_out() -> None:
    with pytest.raises(FieldError, match="required"):
        parse(one({"type": "string"}, required=True), " ")
    assert parse(one({"type": "string"}), "") is UNSET


@pytest.mark.parametrize(
    ("prop", "text", "value"),
    [
        ({"type": "integer", "minimum": 1}, "7", 7),
        ({"type": "number", "maximum": 2.5}, "2.5", 2.5),
        ({"type": "boolean"}, "Yes", True),
        ({"type": "boolean"}, "no", False),
        ({"type": "string", "enum": ["a", "b"]}, "2", "b"),
        ({"type": "string", "oneOf": [{"const": "r", "title": "red"}]}, "red", "r"),
        (
            {"type": "array", "items": {"type": "string", "enum": ["a", "b", "c"]}},
            "3, 1",
            ["c", "a"],
        ),
        ({"type": "string", "format": "date"}, "2026-12-01", "2026-12-01"),
        ({"type": "string", "format": "email"}, "ada@example.com", "ada@example.com"),
    ],
)
def test_answers_are_read_as_their_fields_type(prop: dict[str, Any], text: str, value: Any) -> None:
    assert parse(one(prop), text) == value


@pytest.mark.parametrize(
    ("prop", "text", "why"),
    [
        ({"type": "integer"}, "1.5", "whole number"),
        ({"type": "integer", "minimum": 3}, "2", "at least 3"),
        ({"type": "number", "maximum": 1}, "2", "at most 1"),
        ({"type": "number"}, "nan", "finite"),
        ({"type": "boolean"}, "maybe", "yes or no"),
        ({"type": "string", "minLength": 3}, "ab", "at least 3 characters"),
        ({"type": "string", "maxLength": 2}, "abc", "at most 2 characters"),
        ({"type": "string", "enum": ["a"]}, "9", "pick 1-1"),
        (
            {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}, "minItems": 2},
            "1",
            "at least 2",
        ),
        ({"type": "string", "format": "email"}, "nobody", "email"),
        ({"type": "string", "format": "date"}, "yesterday", "date"),
        ({"type": "string", "format": "uri"}, "example.com", "full address"),
    ],
)
def test_answers_that_do_not_fit_say_why(prop: dict[str, Any], text: str, why: str) -> None:
    with pytest.raises(FieldError, match=why):
        parse(one(prop), text)


def test_el13_an_unknown_required_field_makes_the_form_unfillable() -> None:
    with pytest.raises(Unfillable):
        form_fields(schema({"x": {"type": "color"}}, ["x"]))


def test_el13_an_unknown_optional_field_is_left_out() -> None:
    fields = form_fields(schema({"x": {"type": "color"}, "y": {"type": "string"}}))
    assert [f.name for f in fields] == ["y"]


def test_a_hostile_pattern_never_stalls_the_chat() -> None:
    # Catastrophic for a backtracking matcher; RE2 (or no check at all) answers at once.
    field = one({"type": "string", "pattern": "^(a+)+$"})
    text = "a" * 40 + "!"
    if importlib.util.find_spec("re2") is None:
        # Without RE2 the agent's pattern is not run at all: the answer is taken as typed.
        assert parse(field, text) == text
    else:
        # With RE2 it is checked in linear time and does not match.
        with pytest.raises(FieldError, match="form the agent asks for"):
            parse(field, text)


async def test_fill_asks_every_field_again_after_a_bad_answer_and_returns_the_content() -> None:
    answers = iter(["abc", "4", "", "yes"])
    said: list[str] = []

    async def read(prompt: str, default: str) -> str | None:
        return next(answers)

    fields = form_fields(
        schema({"n": {"type": "integer"}, "o": {"type": "string"}, "b": {"type": "boolean"}}, ["n"])
    )
    assert await fill(fields, read, said.append) == {"n": 4, "b": True}
    assert any("whole number" in line for line in said)


async def test_fill_gives_up_when_the_user_does_or_after_too_many_tries() -> None:
    async def quit_(prompt: str, default: str) -> str | None:
        return None

    async def wrong(prompt: str, default: str) -> str | None:
        return "x"

    fields = form_fields(schema({"n": {"type": "integer"}}, ["n"]))
    assert await fill(fields, quit_, lambda _: None) is None
    said: list[str] = []
    assert await fill(fields, wrong, said.append) is None
    assert sum("whole number" in line for line in said) == MAX_TRIES

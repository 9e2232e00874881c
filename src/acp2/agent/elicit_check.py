"""Checking a form elicitation's accepted content against the requested schema (EL-05).

The client is not trusted: it may skip validation, or send anything at all. Each check
returns problems as short sentences naming the field; an empty list means the content
fits. A property of a type we do not know (kept as ``msgspec.Raw``) accepts any JSON
value, since Nov allows custom property types (EL-14).
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable, Mapping
from typing import Any

from msgspec import UNSET

from acp2.schema import (
    BooleanPropertySchema,
    ElicitationSchema,
    IntegerPropertySchema,
    MultiSelectPropertySchema,
    NumberPropertySchema,
    StringPropertySchema,
)

__all__ = ["content_problems"]


def content_problems(schema: ElicitationSchema, content: Mapping[str, Any]) -> list[str]:
    """Every way ``content`` does not fit ``schema``: missing required fields, fields the
    schema does not name, and values of the wrong type or outside their bounds."""
    problems: list[str] = []
    required = schema.required if isinstance(schema.required, list) else []
    problems += [f"`{name}` is required" for name in required if name not in content]
    for name, value in content.items():
        prop = schema.properties.get(name)
        if prop is None:
            problems.append(f"`{name}` is not a field of the form")
            continue
        check = _CHECKS.get(type(prop))
        if check is not None:
            problems += [f"`{name}` {problem}" for problem in check(prop, value)]
    return problems


def _string(prop: Any, value: Any) -> list[str]:
    if not isinstance(value, str):
        return ["must be a string"]
    problems = _length(prop.min_length, prop.max_length, len(value), "characters")
    choices = _string_choices(prop)
    if choices is not None and value not in choices:
        problems.append("is not one of the offered choices")
    if isinstance(prop.pattern, str) and not _matches(prop.pattern, value):
        problems.append(f"does not match the pattern {prop.pattern!r}")
    if isinstance(prop.format, str) and not _FORMATS.get(prop.format, _any)(value):
        problems.append(f"is not a valid {prop.format}")
    return problems


def _string_choices(prop: StringPropertySchema) -> set[str] | None:
    if isinstance(prop.enum, list):
        return set(prop.enum)
    if isinstance(prop.one_of, list):
        return {option.const for option in prop.one_of}
    return None


def _matches(pattern: str, value: str) -> bool:
    # Python's re covers the common subset of ECMA-262; a pattern it cannot compile is
    # the agent's own mistake, not the client's, so it does not reject the answer.
    try:
        return re.search(pattern, value) is not None
    except re.error:
        return True


def _number(prop: Any, value: Any) -> list[str]:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return ["must be a number"]
    return _bounds(prop.minimum, prop.maximum, value)


def _integer(prop: Any, value: Any) -> list[str]:
    integral = isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    if isinstance(value, bool) or not integral:
        return ["must be an integer"]
    return _bounds(prop.minimum, prop.maximum, value)


def _boolean(prop: Any, value: Any) -> list[str]:
    return [] if isinstance(value, bool) else ["must be true or false"]


def _multi(prop: Any, value: Any) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return ["must be a list of strings"]
    problems = _length(prop.min_items, prop.max_items, len(value), "choices")
    items = prop.items
    allowed = set(items.enum) if isinstance(items.enum, list) else None
    if allowed is None and isinstance(items.any_of, list):
        allowed = {option.const for option in items.any_of}
    if allowed is not None and not set(value) <= allowed:
        problems.append("holds a choice that was not offered")
    return problems


def _length(low: Any, high: Any, size: int, unit: str) -> list[str]:
    if isinstance(low, int) and size < low:
        return [f"needs at least {low} {unit}"]
    if isinstance(high, int) and size > high:
        return [f"allows at most {high} {unit}"]
    return []


def _bounds(low: Any, high: Any, value: float) -> list[str]:
    if low is not UNSET and low is not None and value < low:
        return [f"must be at least {low}"]
    if high is not UNSET and high is not None and value > high:
        return [f"must be at most {high}"]
    return []


def _any(value: str) -> bool:
    return True


def _parses(parse: Callable[[str], object]) -> Callable[[str], bool]:
    def check(value: str) -> bool:
        try:
            parse(value)
        except ValueError:
            return False
        return True

    return check


#: The formats EL-04 names; any other format is only an annotation.
_FORMATS: dict[str, Callable[[str], bool]] = {
    "email": lambda v: re.fullmatch(r"[^@\s]+@[^@\s]+", v) is not None,
    "uri": lambda v: re.match(r"[A-Za-z][A-Za-z0-9+.-]*:\S", v) is not None,
    "date": _parses(datetime.date.fromisoformat),
    "date-time": _parses(datetime.datetime.fromisoformat),
}

_CHECKS: dict[type, Callable[[Any, Any], list[str]]] = {
    StringPropertySchema: _string,
    NumberPropertySchema: _number,
    IntegerPropertySchema: _integer,
    BooleanPropertySchema: _boolean,
    MultiSelectPropertySchema: _multi,
}

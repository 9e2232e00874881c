"""Filling in an agent's elicitation form on a terminal, field by field (EL-04, EL-05).

Pure: :func:`form_fields` turns the form's schema into :class:`Field` values (labels and
help sanitized; a field of a type this client does not know is never shown as a known
control, EL-13: the form is refused when such a field is required and the field left out
otherwise), :func:`parse` checks one typed answer against its field, and :func:`fill`
asks for every field through the front-end's ``read`` and returns the content to send.

Checks: ``required``; string ``minLength`` / ``maxLength``, ``pattern`` (only with RE2
installed -- the pattern comes from the agent, and a hostile one would stall Python's
backtracking matcher on an innocent answer; the agent checks it anyway), the formats
``email``, ``uri``, ``date`` and ``date-time`` lightly; choices by number or value;
number / integer bounds; yes / no; multi-select item counts.
"""

from __future__ import annotations

import datetime
import importlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Final

from msgspec import UNSET

from acp2.errors import FormFieldError as FieldError
from acp2.errors import FormUnfillable as Unfillable
from acp2.sanitize import line
from acp2.schema.elicitation_schema import (
    BooleanPropertySchema,
    ElicitationSchema,
    IntegerPropertySchema,
    MultiSelectPropertySchema,
    NumberPropertySchema,
    StringPropertySchema,
)
from acp2.ui.choose import picked

__all__ = ["MAX_TRIES", "Field", "FieldError", "Unfillable", "fill", "form_fields", "parse"]

#: How often a field is asked again after an invalid answer before the form is given up.
MAX_TRIES: Final = 5
#: ``read(prompt, default)`` returns the typed text, or None when the user gave up.
Read = Callable[[str, str], Awaitable[str | None]]

_YES: Final = {"y", "yes", "true", "1", "on"}
_NO: Final = {"n", "no", "false", "0", "off"}


@dataclass(frozen=True)
class Field:
    """One form field as the chat shows it: ``name`` (the content key), ``label`` and
    ``help`` (sanitized), ``choices`` as (value, title) pairs, ``default_text`` (what the
    input line is prefilled with), and the schema it checks against."""

    name: str
    label: str
    help: str
    required: bool
    schema: Any
    choices: list[tuple[str, str]] = field(default_factory=list)
    default_text: str = ""

    @property
    def multiple(self) -> bool:
        """True for a multi-select (answers are comma-separated)."""
        return isinstance(self.schema, MultiSelectPropertySchema)


def form_fields(schema: ElicitationSchema) -> list[Field]:
    """The fields of ``schema`` in its order; raises :class:`Unfillable` (EL-13)."""
    required = set(schema.required) if isinstance(schema.required, list) else set()
    out = []
    for name, prop in schema.properties.items():
        if not isinstance(prop, _KNOWN):
            if name in required:
                raise Unfillable(f"the required field {line(name)!r} has a type this client lacks")
            continue
        out.append(_field(name, prop, name in required))
    return out


_KNOWN: Final = (
    StringPropertySchema,
    NumberPropertySchema,
    IntegerPropertySchema,
    BooleanPropertySchema,
    MultiSelectPropertySchema,
)


def _text(value: Any) -> str:
    return line(value) if isinstance(value, str) else ""


def _field(name: str, prop: Any, required: bool) -> Field:
    choices = _choices(prop)
    default = prop.default
    if isinstance(default, bool):
        default_text = "yes" if default else "no"
    elif isinstance(default, list):
        default_text = ", ".join(str(v) for v in default)
    elif default is not UNSET and default is not None:
        default_text = str(default)
    else:
        default_text = ""
    return Field(
        name=name,
        label=_text(prop.title) or line(name),
        help=_text(prop.description),
        required=required,
        schema=prop,
        choices=choices,
        default_text=line(default_text),
    )


def _choices(prop: Any) -> list[tuple[str, str]]:
    if isinstance(prop, StringPropertySchema):
        if isinstance(prop.one_of, list):
            return [(o.const, _text(o.title) or line(o.const)) for o in prop.one_of]
        if isinstance(prop.enum, list):
            return [(v, line(v)) for v in prop.enum]
    if isinstance(prop, MultiSelectPropertySchema):
        items = prop.items
        if isinstance(items.any_of, list):
            return [(o.const, _text(o.title) or line(o.const)) for o in items.any_of]
        if isinstance(items.enum, list):
            return [(v, line(v)) for v in items.enum]
    return []


def parse(spec: Field, text: str) -> Any:
    """The value ``text`` means for ``spec``; ``UNSET`` to leave an optional field out.
    Raises :class:`FieldError`."""
    text = text.strip()
    if not text:
        if spec.required:
            raise FieldError("this field is required")
        return UNSET
    prop = spec.schema
    if isinstance(prop, BooleanPropertySchema):
        return _boolean(text)
    if isinstance(prop, IntegerPropertySchema | NumberPropertySchema):
        return _number(prop, text)
    if isinstance(prop, MultiSelectPropertySchema):
        return _many(spec, text)
    return _string(spec, text)


def _boolean(text: str) -> bool:
    word = text.lower()
    if word in _YES:
        return True
    if word in _NO:
        return False
    raise FieldError("answer yes or no")


def _number(prop: IntegerPropertySchema | NumberPropertySchema, text: str) -> int | float:
    try:
        value: int | float = int(text) if isinstance(prop, IntegerPropertySchema) else float(text)
    except ValueError:
        kind = "a whole number" if isinstance(prop, IntegerPropertySchema) else "a number"
        raise FieldError(f"type {kind}") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise FieldError("type a finite number")
    if isinstance(prop.minimum, int | float) and value < prop.minimum:
        raise FieldError(f"at least {prop.minimum}")
    if isinstance(prop.maximum, int | float) and value > prop.maximum:
        raise FieldError(f"at most {prop.maximum}")
    return value


def _choice(spec: Field, text: str) -> str:
    index = picked(text, len(spec.choices))
    if index is not None:
        return spec.choices[index][0]
    for value, title in spec.choices:
        if text in (value, title):
            return value
    raise FieldError(f"pick 1-{len(spec.choices)}")


def _many(spec: Field, text: str) -> list[str]:
    prop = spec.schema
    picked = []
    for part in (p.strip() for p in text.split(",")):
        if part and (value := _choice(spec, part)) not in picked:
            picked.append(value)
    if isinstance(prop.min_items, int) and len(picked) < prop.min_items:
        raise FieldError(f"pick at least {prop.min_items}")
    if isinstance(prop.max_items, int) and len(picked) > prop.max_items:
        raise FieldError(f"pick at most {prop.max_items}")
    return picked


def _string(spec: Field, text: str) -> str:
    if spec.choices:
        return _choice(spec, text)
    prop: StringPropertySchema = spec.schema
    if isinstance(prop.min_length, int) and len(text) < prop.min_length:
        raise FieldError(f"at least {prop.min_length} characters")
    if isinstance(prop.max_length, int) and len(text) > prop.max_length:
        raise FieldError(f"at most {prop.max_length} characters")
    _format(prop.format, text)
    if isinstance(prop.pattern, str) and not _matches(prop.pattern, text):
        raise FieldError("does not have the form the agent asks for")
    return text


def _format(kind: Any, text: str) -> None:
    if kind == "email" and ("@" not in text.strip("@") or " " in text):
        raise FieldError("type an email address")
    if kind == "uri" and "://" not in text and not text.startswith(("mailto:", "urn:")):
        raise FieldError("type a full address (scheme://...)")
    if kind in ("date", "date-time"):
        try:
            parse_iso = datetime.date if kind == "date" else datetime.datetime
            parse_iso.fromisoformat(text)
        except ValueError:
            raise FieldError(f"type a {kind} (ISO 8601, e.g. 2026-12-01)") from None


def _matches(pattern: str, text: str) -> bool:
    """RE2 search when installed (linear time); without it the pattern is not checked."""
    try:
        re2: Any = importlib.import_module("re2")
    except ImportError:
        return True
    try:
        return re2.search(pattern, text) is not None
    except Exception:  # a pattern RE2 cannot read: the agent checks it
        return True


async def fill(
    fields: list[Field], read: Read, say: Callable[[str], None]
) -> dict[str, Any] | None:
    """Ask for every field; the content to accept with, or None when the user gave up
    (``read`` returned None, or :data:`MAX_TRIES` invalid answers to one field)."""
    content: dict[str, Any] = {}
    for spec in fields:
        if spec.help or spec.choices or spec.multiple or _is_boolean(spec):
            say(_describe(spec))
        for number, (_, title) in enumerate(spec.choices, 1):
            say(f"  {number}. {title}")
        value = await _ask(spec, read, say)
        if value is None:
            return None
        if value is not UNSET:
            content[spec.name] = value
    return content


async def _ask(spec: Field, read: Read, say: Callable[[str], None]) -> Any:
    # A yes/no default is named, not prefilled: typing "y" after a prefilled "no" gave "noy".
    named = _is_boolean(spec) and bool(spec.default_text)
    shown = f" [enter: {spec.default_text}]" if named else ""
    prompt = f"{spec.label}{'' if spec.required else ' (optional)'}{shown}: "
    for _ in range(MAX_TRIES):
        text = await read(prompt, "" if named else spec.default_text)
        if text is None:
            return None
        if named and not text.strip():
            text = spec.default_text
        try:
            return parse(spec, text)
        except FieldError as exc:
            say(f"  {exc}")
    say("  too many tries: the form is cancelled")
    return None


def _is_boolean(spec: Field) -> bool:
    return isinstance(spec.schema, BooleanPropertySchema)


def _describe(spec: Field) -> str:
    kind = "yes/no" if _is_boolean(spec) else ""
    if spec.multiple:
        kind = "numbers, comma-separated"
    parts = [spec.label, f"({kind})" if kind else "", f"-- {spec.help}" if spec.help else ""]
    return " ".join(p for p in parts if p)

"""v1 form elicitation schema: the same shapes as v2, without v2's non-empty list rule.

``ElicitationPropertySchema`` is an open union tagged by ``type`` (``string``, ``number``,
``integer``, ``boolean``, ``array``); an unknown property type is kept as ``msgspec.Raw``
and must never be rendered as a known control (EL-13).
"""

from __future__ import annotations

from typing import Annotated, Literal, TypeAlias

import msgspec
from msgspec import UNSET, Raw, UnsetType

from acp2.compat.v1.schema.common import MetaField, UInt
from acp2.schema._base import LENIENT, SKIP_INVALID, Model

__all__ = [
    "BooleanPropertySchema",
    "ElicitationPropertySchema",
    "ElicitationSchema",
    "EnumOption",
    "IntegerPropertySchema",
    "MultiSelectItems",
    "MultiSelectPropertySchema",
    "NumberPropertySchema",
    "StringPropertySchema",
]

_OptStr = Annotated[str | UnsetType | None, LENIENT]
_Strs = list[str]


class EnumOption(Model, gc=False, kw_only=True):
    """A titled choice ``{const, title, description?}`` of a string or multi-select field."""

    const: str
    title: str
    description: _OptStr = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


_Options = list[EnumOption]


class StringPropertySchema(Model, tag_field="type", tag="string", gc=False, kw_only=True):
    """A ``string`` form field: length bounds, pattern, format, default, choices."""

    title: _OptStr = UNSET
    description: _OptStr = UNSET
    min_length: UInt | UnsetType | None = UNSET
    max_length: UInt | UnsetType | None = UNSET
    #: An ECMA-262 regular expression.
    pattern: str | UnsetType | None = UNSET
    #: ``email``, ``uri``, ``date``, ``date-time`` or another (annotation-only) format.
    format: str | UnsetType | None = UNSET
    default: _OptStr = UNSET
    enum: _Strs | UnsetType | None = UNSET
    one_of: _Options | UnsetType | None = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class NumberPropertySchema(Model, tag_field="type", tag="number", gc=False, kw_only=True):
    """A ``number`` form field with optional bounds and default."""

    title: _OptStr = UNSET
    description: _OptStr = UNSET
    minimum: float | UnsetType | None = UNSET
    maximum: float | UnsetType | None = UNSET
    default: Annotated[float | UnsetType | None, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class IntegerPropertySchema(Model, tag_field="type", tag="integer", gc=False, kw_only=True):
    """An ``integer`` form field with optional bounds and default."""

    title: _OptStr = UNSET
    description: _OptStr = UNSET
    minimum: int | UnsetType | None = UNSET
    maximum: int | UnsetType | None = UNSET
    default: Annotated[int | UnsetType | None, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class BooleanPropertySchema(Model, tag_field="type", tag="boolean", gc=False, kw_only=True):
    """A ``boolean`` form field with an optional default."""

    title: _OptStr = UNSET
    description: _OptStr = UNSET
    default: Annotated[bool | UnsetType | None, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class MultiSelectItems(Model, gc=False, kw_only=True):
    """The items of a multi-select: ``{type:"string", enum}`` or titled ``{anyOf}``.

    The schema's union of ``StringMultiSelectItems`` (tagged), ``TitledMultiSelectItems``
    (untagged) and other ``type`` values, merged into one struct because msgspec cannot mix
    tagged and untagged variants. ``type == "string"`` needs ``enum``; no ``type`` needs
    ``any_of``; any other ``type`` is a custom / future kind (only the fields named here are
    kept) that a client must not render as a known control.
    """

    type: str | UnsetType = UNSET
    enum: _Strs | UnsetType = UNSET
    any_of: _Options | UnsetType = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")

    def __post_init__(self) -> None:
        if self.type == "string" and self.enum is UNSET:
            raise ValueError("string multi-select items need `enum`")
        if self.type is UNSET and self.any_of is UNSET:
            raise ValueError("multi-select items need `type` or `anyOf`")


class MultiSelectPropertySchema(Model, tag_field="type", tag="array", gc=False, kw_only=True):
    """An ``array`` form field: a multi-select over string choices."""

    items: MultiSelectItems
    title: _OptStr = UNSET
    description: _OptStr = UNSET
    min_items: UInt | UnsetType | None = UNSET
    max_items: UInt | UnsetType | None = UNSET
    default: Annotated[list[str] | UnsetType | None, LENIENT, SKIP_INVALID] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


#: One form field; an unknown ``type`` is kept as ``msgspec.Raw``.
ElicitationPropertySchema: TypeAlias = (
    StringPropertySchema
    | NumberPropertySchema
    | IntegerPropertySchema
    | BooleanPropertySchema
    | MultiSelectPropertySchema
    | Raw
)


class ElicitationSchema(Model, gc=False, kw_only=True):
    """A form's schema: ``type`` ``"object"``, ``properties``, ``required``, title.

    ``type`` and ``properties`` are always sent (Nov requires them) and default when
    missing (Aug gives defaults, D-32).
    """

    type: Annotated[Literal["object"], LENIENT] = "object"
    title: _OptStr = UNSET
    description: _OptStr = UNSET
    properties: dict[str, ElicitationPropertySchema] = msgspec.field(default_factory=dict)
    required: list[str] | UnsetType | None = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")

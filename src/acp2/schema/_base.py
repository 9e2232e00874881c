"""The base of every wire model, and the lenient decoder behind open unions.

Every ACP type is a :class:`Model` (a ``msgspec.Struct``): camelCase on the wire,
snake_case in Python, keyword-only construction. Optional fields default to
``msgspec.UNSET`` so that the three patch states survive a round trip:

* ``UNSET`` -- the key was omitted (patch: unchanged);
* ``None`` -- the key was ``null`` (patch: clear);
* a value -- the key carried that value (patch: replace).

Open unions are annotated ``A | B | ... | msgspec.Raw``. The fast path decodes with a
plain msgspec decoder, which checks every known variant strictly. When that fails, the
message is decoded again by :func:`convert`, a walker that follows the same annotations
and (a) keeps a variant whose tag is unknown as ``msgspec.Raw`` -- it re-encodes
byte-for-byte -- and (b) applies the schema's leniency markers: a field annotated with
:data:`LENIENT` that does not validate is treated as absent, and a list annotated with
:data:`SKIP_INVALID` drops the items that do not validate. A known tag with a malformed
payload is still an error, raised as ``msgspec.ValidationError`` with the JSON path.
"""

from __future__ import annotations

import types
import typing
from typing import Annotated, Any, Final, get_args, get_origin

import msgspec
from msgspec import UNSET, Raw, UnsetType

__all__ = [
    "LENIENT",
    "SKIP_INVALID",
    "UNSET",
    "Meta",
    "Model",
    "Raw",
    "UnsetType",
    "convert",
    "tag_of",
]


class Model(msgspec.Struct, kw_only=True, rename="camel"):
    """Base class of every ACP wire model (camelCase keys, keyword-only fields).

    msgspec applies ``kw_only`` only to the fields a class itself declares, so every
    subclass passes ``kw_only=True`` again (``rename`` and ``gc`` are inherited).
    """


#: The type of ``_meta``: an object, ``null``, or omitted. It is declared on each model as
#: ``meta: Meta | UnsetType = field(default=UNSET, name="_meta")``.
Meta = dict[str, Any] | None


class _Marker:
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


#: ``Annotated[T, LENIENT]``: the schema's ``x-deserialize-default-on-error``. A value that
#: does not validate is decoded as if the key were absent.
LENIENT: Final = _Marker("LENIENT")
#: ``Annotated[list[T], SKIP_INVALID]``: the schema's ``x-deserialize-skip-invalid-items``.
SKIP_INVALID: Final = _Marker("SKIP_INVALID")

_NONE_TYPES = (type(None), UnsetType)
_UNION_TYPES = (typing.Union, types.UnionType)


def tag_of(raw: Raw, tag_field: str) -> str | None:
    """Return the discriminator value of a raw unknown variant, or None when it has none.

    Useful to display an unknown union member generically (e.g. its ``sessionUpdate``).
    """
    obj = msgspec.json.decode(raw)
    if isinstance(obj, dict):
        value = obj.get(tag_field)
        return value if isinstance(value, str) else None
    return None


def convert(obj: Any, tp: Any, path: str = "$") -> Any:
    """Convert decoded JSON ``obj`` to ``tp`` with open-union and leniency rules.

    Raises ``msgspec.ValidationError`` naming the JSON path of the first problem.
    """
    markers: tuple[Any, ...] = ()
    if get_origin(tp) is Annotated:
        inner, *extra = get_args(tp)
        markers = tuple(m for m in extra if isinstance(m, _Marker))
        if markers:
            rest = tuple(m for m in extra if not isinstance(m, _Marker))
            tp = Annotated[(inner, *rest)] if rest else inner
    if SKIP_INVALID in markers:
        return _convert_skipping(obj, tp, path)
    return _convert(obj, tp, path)


def _convert(obj: Any, tp: Any, path: str) -> Any:
    if isinstance(tp, type) and issubclass(tp, msgspec.Struct):
        return _convert_struct(obj, tp, path)
    origin = get_origin(tp)
    if origin in _UNION_TYPES:
        return _convert_union(obj, tp, path)
    if origin is list and isinstance(obj, list):
        (item_tp,) = get_args(tp) or (Any,)
        return [convert(item, item_tp, f"{path}[{i}]") for i, item in enumerate(obj)]
    if origin is dict and isinstance(obj, dict):
        # Maps whose values may be open unions (e.g. an elicitation schema's properties).
        key_tp, value_tp = get_args(tp) or (str, Any)
        return {
            msgspec.convert(key, key_tp, strict=True): convert(value, value_tp, f"{path}.{key}")
            for key, value in obj.items()
        }
    if tp is Raw:
        return Raw(msgspec.json.encode(obj))
    try:
        return msgspec.convert(obj, tp, strict=True)
    except msgspec.ValidationError as exc:
        raise _at(exc, path) from None


def _convert_skipping(obj: Any, tp: Any, path: str) -> Any:
    args = (
        [a for a in get_args(tp) if a not in _NONE_TYPES]
        if get_origin(tp) in _UNION_TYPES
        else [tp]
    )
    list_tp = next((a for a in args if get_origin(a) is list), None)
    if list_tp is None or not isinstance(obj, list):
        return _convert(obj, tp, path)
    (item_tp,) = get_args(list_tp)
    kept = []
    for i, item in enumerate(obj):
        try:
            kept.append(convert(item, item_tp, f"{path}[{i}]"))
        except msgspec.ValidationError:
            continue
    return kept


def _convert_struct(obj: Any, tp: type[msgspec.Struct], path: str) -> Any:
    if not isinstance(obj, dict):
        raise msgspec.ValidationError(f"Expected `object`, got `{_json_type(obj)}` - at `{path}`")
    config = tp.__struct_config__
    if config.tag is not None:
        # Like msgspec, a tagged struct decoded on its own accepts a missing tag field.
        tag_field = config.tag_field
        if tag_field in obj and obj[tag_field] != config.tag:
            raise msgspec.ValidationError(
                f"Invalid value {obj.get(tag_field)!r} - at `{path}.{tag_field}`"
            )
    kwargs: dict[str, Any] = {}
    for info in msgspec.structs.fields(tp):
        key = info.encode_name
        if key not in obj:
            if info.required:
                raise msgspec.ValidationError(
                    f"Object missing required field `{key}` - at `{path}`"
                )
            continue
        try:
            kwargs[info.name] = convert(obj[key], info.type, f"{path}.{key}")
        except msgspec.ValidationError:
            if not _is_lenient(info.type) or info.required:
                raise
    try:
        return tp(**kwargs)
    except (ValueError, TypeError) as exc:
        raise msgspec.ValidationError(f"{exc} - at `{path}`") from None


def _convert_union(obj: Any, tp: Any, path: str) -> Any:
    args = get_args(tp)
    if obj is None and type(None) in args:
        return None
    members = [a for a in args if a not in _NONE_TYPES]
    tagged = [a for a in members if _is_tagged(a)]
    if tagged and isinstance(obj, dict):
        tag_field = tagged[0].__struct_config__.tag_field
        tag = obj.get(tag_field)
        for cls in tagged:
            if cls.__struct_config__.tag == tag:
                return _convert_struct(obj, cls, path)
        if Raw in members and isinstance(tag, str):
            return Raw(msgspec.json.encode(obj))
        raise msgspec.ValidationError(f"Invalid value {tag!r} - at `{path}.{tag_field}`")
    for member in members:
        if _accepts(member, obj):
            return convert(obj, member, path)
    try:
        return msgspec.convert(obj, tp, strict=True)
    except msgspec.ValidationError as exc:
        raise _at(exc, path) from None


def _accepts(tp: Any, obj: Any) -> bool:
    """Whether ``obj``'s JSON kind is the one ``tp`` decodes (used to pick a union member)."""
    base = get_args(tp)[0] if get_origin(tp) is Annotated else tp
    origin = get_origin(base) or base
    if isinstance(obj, dict):
        return isinstance(origin, type) and (
            issubclass(origin, msgspec.Struct) or issubclass(origin, dict)
        )
    if isinstance(obj, list):
        return origin is list
    return False


def _is_tagged(tp: Any) -> bool:
    return (
        isinstance(tp, type)
        and issubclass(tp, msgspec.Struct)
        and tp.__struct_config__.tag is not None
    )


def _is_lenient(tp: Any) -> bool:
    return get_origin(tp) is Annotated and LENIENT in get_args(tp)[1:]


def _json_type(obj: Any) -> str:
    return {
        dict: "object",
        list: "array",
        str: "str",
        bool: "bool",
        int: "int",
        float: "float",
    }.get(type(obj), "null")


def _at(exc: msgspec.ValidationError, path: str) -> msgspec.ValidationError:
    text = str(exc)
    if " - at `$" in text:
        head, _, tail = text.partition(" - at `$")
        return msgspec.ValidationError(f"{head} - at `{path}{tail}")
    return msgspec.ValidationError(f"{text} - at `{path}`")

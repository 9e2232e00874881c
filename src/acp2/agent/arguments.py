"""What a :class:`~acp2.agent.Turn` and its handles accept, turned into wire models.

Agent authors pass what comes naturally -- a string, a dict, a typed model -- and get
either a valid model or a :class:`TypeError` at the call that names the argument and
what it takes. An invalid frame is never sent.

* tool-call content: a string (text), a content block (``TextContent``, ``ImageContent``,
  ..., or its dict), a ``Content`` / ``Diff`` / ``Terminal`` (or its dict), a terminal
  handle;
* content blocks: a string (text), a block, or its dict;
* plan entries: a string (its text: priority ``medium``, status ``pending``), a
  ``PlanEntry``, or a dict with ``content`` and optional ``priority`` / ``status``;
* permission options and commands: the model or its dict.

Dict keys may be camelCase (as on the wire) or snake_case (as in Python). A dict whose
``type`` starts with ``_`` is a custom variant and is sent as it is.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any, Final, TypeVar

import msgspec
from msgspec import UNSET, Raw

from acp2.schema import (
    AudioContent,
    AvailableCommand,
    Content,
    Diff,
    EmbeddedResource,
    ImageContent,
    PermissionOption,
    PlanEntry,
    ResourceLink,
    SessionReference,
    Terminal,
    TextContent,
    ToolCallLocation,
)
from acp2.schema.codec import encode

__all__ = [
    "commands",
    "content_blocks",
    "locations",
    "optional_text",
    "permission_options",
    "plan_entries",
    "text",
    "tool_call_content",
    "tool_call_contents",
]

T = TypeVar("T")

#: Content blocks by their ``type``.
BLOCKS: Final[dict[str, type[Any]]] = {
    "text": TextContent,
    "image": ImageContent,
    "audio": AudioContent,
    "resource_link": ResourceLink,
    "resource": EmbeddedResource,
}
#: Tool-call content items by their ``type``.
ITEMS: Final[dict[str, type[Any]]] = {
    "content": Content,
    "diff": Diff,
    "terminal": Terminal,
    "session": SessionReference,
}
_BLOCK_TYPES: tuple[type[Any], ...] = tuple(BLOCKS.values())
#: What one block-like value (rather than a list of them) may be.
_ONE_BLOCK: tuple[type[Any], ...] = (str, Mapping, Raw, *_BLOCK_TYPES)
_ITEM_TYPES: tuple[type[Any], ...] = tuple(ITEMS.values())
_CONTENT_HELP = (
    "a string, a content block (TextContent, ImageContent, AudioContent, ResourceLink, "
    "EmbeddedResource), tool-call content (Content, Diff, Terminal, SessionReference), or "
    "the dict of one"
)
_BLOCK_HELP = "a string, a content block (TextContent, ImageContent, ...) or its dict"


@cache
def _decoder(tp: Any) -> msgspec.json.Decoder[Any]:
    return msgspec.json.Decoder(tp)


def _name(value: Any) -> str:
    return type(value).__name__


def _camel(key: str) -> str:
    if key.startswith("_") or "_" not in key:
        return key
    head, *rest = key.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _wire_keys(value: Any) -> Any:
    """``value`` with snake_case dict keys made camelCase (``_meta`` left as it is)."""
    if isinstance(value, Mapping):
        return {_camel(str(k)): v if str(k) == "_meta" else _wire_keys(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_wire_keys(v) for v in value]
    return value


@cache
def _field_names(tp: Any) -> frozenset[str]:
    """The wire names of ``tp``'s fields, with its tag field."""
    info = tp.__struct_config__
    names = {f.encode_name for f in msgspec.structs.fields(tp)}
    return frozenset(names | ({info.tag_field} if info.tag_field else set()))


def _checked(value: Any, tp: Any, what: str) -> Any:
    """``value`` (a model or a dict) decoded strictly as ``tp``; TypeError if it does not
    fit, or if a dict has a key ``tp`` does not know (a typo would be dropped silently)."""
    if isinstance(value, Mapping):
        value = _wire_keys(value)
        unknown = sorted(set(value) - _field_names(tp))
        if unknown:
            known = ", ".join(sorted(_field_names(tp)))
            raise TypeError(f"{what}: unknown key(s) {', '.join(unknown)} (known: {known})")
    try:
        data = encode(value)
        return _decoder(tp).decode(data)
    except (msgspec.ValidationError, msgspec.DecodeError, TypeError) as exc:
        raise TypeError(f"{what}: {exc}") from None


def _tagged(value: Mapping[str, Any], table: dict[str, type[Any]], what: str) -> Any:
    """A dict with a ``type``: a model of ``table``, or a custom ``_`` variant as Raw."""
    tag = value.get("type")
    if isinstance(tag, str) and tag.startswith("_"):
        return Raw(encode(_wire_keys(value)))
    if tag not in table:
        known = ", ".join(table)
        raise TypeError(f"{what}: unknown type {tag!r} (known: {known}, or a custom '_' type)")
    return _checked(value, table[tag], what)


def text(value: Any, what: str) -> str:
    """``value`` if it is a string, else TypeError."""
    if not isinstance(value, str):
        raise TypeError(f"{what} takes a string, not {_name(value)}")
    return value


def optional_text(value: Any, what: str) -> Any:
    """A string, None (clear) or UNSET (unchanged); else TypeError."""
    if value is UNSET or value is None or isinstance(value, str):
        return value
    raise TypeError(f"{what} takes a string or None, not {_name(value)}")


def locations(value: Any, what: str) -> Any:
    """Tool-call locations from paths (strings), ``ToolCallLocation`` models or dicts."""
    if value is UNSET or value is None:
        return value
    if isinstance(value, str | Mapping | ToolCallLocation):
        value = [value]
    if not isinstance(value, list | tuple):
        raise TypeError(f"{what} takes a list of paths or ToolCallLocation, not {_name(value)}")
    return [
        _checked({"path": item} if isinstance(item, str) else item, ToolCallLocation, what)
        for item in value
    ]


def content_block(value: Any, what: str) -> Any:
    """One content block from a string, a block or its dict."""
    if isinstance(value, str):
        return TextContent(text=value)
    if isinstance(value, _BLOCK_TYPES):
        return _checked(value, type(value), what)
    if isinstance(value, Raw):
        return value
    if isinstance(value, Mapping):
        return _tagged(value, BLOCKS, what)
    raise TypeError(f"{what} takes {_BLOCK_HELP}, not {_name(value)}")


def content_blocks(value: Any, what: str) -> list[Any]:
    """A list of content blocks from one block-like value or a list of them."""
    if isinstance(value, _ONE_BLOCK):
        return [content_block(value, what)]
    if not isinstance(value, list | tuple):
        raise TypeError(f"{what} takes {_BLOCK_HELP}, or a list of them; not {_name(value)}")
    return [content_block(item, what) for item in value]


def tool_call_content(value: Any, what: str) -> Any:
    """One ToolCallContent item (``Content``, ``Diff``, ``Terminal``, ``SessionReference``
    or a custom Raw)."""
    terminal_id = getattr(value, "terminal_id", None)
    if isinstance(terminal_id, str) and not isinstance(value, Terminal):  # a TerminalHandle
        return Terminal(terminal_id=terminal_id)
    if isinstance(value, _ITEM_TYPES):
        return _checked(value, type(value), what)
    if isinstance(value, Raw):
        return value
    if isinstance(value, Mapping) and value.get("type") in ITEMS:
        return _tagged(value, ITEMS, what)
    if isinstance(value, _ONE_BLOCK):
        block = content_block(value, what)
        return block if isinstance(block, Raw) else Content(content=block)
    raise TypeError(f"{what} takes {_CONTENT_HELP}; not {_name(value)}")


def tool_call_contents(value: Any, what: str) -> Any:
    """The ``content`` of a tool-call patch: UNSET and None pass, one item becomes a list."""
    if value is UNSET or value is None:
        return value
    if isinstance(value, list | tuple):
        return [tool_call_content(item, what) for item in value]
    return [tool_call_content(value, what)]


def plan_entry(value: Any, what: str) -> PlanEntry:
    """One plan entry from a string, a ``PlanEntry`` or a dict."""
    if isinstance(value, str):
        return PlanEntry(content=value, priority="medium", status="pending")
    if isinstance(value, PlanEntry):
        return _checked(value, PlanEntry, what)  # type: ignore[no-any-return]
    if isinstance(value, Mapping):
        fields = {"priority": "medium", "status": "pending", **value}
        return _checked(fields, PlanEntry, what)  # type: ignore[no-any-return]
    raise TypeError(
        f"{what} takes plan entries: a string, a PlanEntry, or a dict with 'content' "
        f"(and 'priority', 'status'); not {_name(value)}"
    )


def plan_entries(value: Any, what: str) -> list[PlanEntry]:
    """A list of plan entries (a single string or dict is a mistake: TypeError)."""
    if isinstance(value, str | Mapping | PlanEntry) or not isinstance(value, list | tuple):
        raise TypeError(f"{what} takes a list of plan entries, not one {_name(value)}")
    return [plan_entry(item, what) for item in value]


def _models(value: Any, tp: type[T], what: str, fields: str) -> list[T]:
    if isinstance(value, str | Mapping | tp) or not isinstance(value, list | tuple):
        raise TypeError(f"{what} takes a list of {tp.__name__} (or dicts), not {_name(value)}")
    out: list[T] = []
    for item in value:
        if not isinstance(item, tp | Mapping):
            raise TypeError(f"{what}: expected a {tp.__name__} or a dict {fields}, not {item!r}")
        out.append(_checked(item, tp, what))
    return out


def permission_options(value: Any, what: str) -> list[PermissionOption]:
    """Permission options from ``PermissionOption`` models or dicts."""
    return _models(value, PermissionOption, what, "with option_id, name and kind")


def commands(value: Any, what: str) -> list[AvailableCommand]:
    """Slash commands from ``AvailableCommand`` models or dicts."""
    return _models(value, AvailableCommand, what, "with name and description")

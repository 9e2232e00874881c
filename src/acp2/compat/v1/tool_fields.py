"""v1 tool call fields lifted to v2, shared by the update lifter and permission requests.

A v1 tool call reaches a v2 client two ways: as a ``tool_call`` / ``tool_call_update``
session update (:class:`acp2.compat.v1.lift.V1Lifter`) and as the ``toolCall`` of a
``session/request_permission`` (:func:`acp2.compat.v1.client_side.permission_request_from_v1`).
Both carry the same fields, so both lift them here: content items (text, diffs, terminal
references), locations, title, kind, status, raw input and output, ``_meta``.
Pure functions; nothing is dropped (an unknown content item stays ``msgspec.Raw``).
"""

from __future__ import annotations

from typing import Any

from msgspec import UNSET

import acp2.compat.v1.schema as v1
import acp2.schema as v2
from acp2.compat.v1.convert import block_from_v1, diff_from_v1, recode

__all__ = ["locations_from_v1", "tool_call_fields_from_v1", "tool_content_from_v1"]


def tool_content_from_v1(items: list[Any]) -> list[Any]:
    """v1 tool call content as v2: blocks, diffs (:func:`diff_from_v1`), terminal
    references (the terminal is this client's own, so its id is kept); unknown items
    stay raw, as v2 keeps them."""
    out: list[Any] = []
    for item in items:
        if isinstance(item, v1.Content):
            out.append(v2.Content(content=block_from_v1(item.content), meta=item.meta))
        elif isinstance(item, v1.Diff):
            out.append(diff_from_v1(item))
        elif isinstance(item, v1.Terminal):
            out.append(v2.Terminal(terminal_id=item.terminal_id, meta=item.meta))
        else:
            out.append(item)
    return out


def locations_from_v1(locations: list[v1.ToolCallLocation]) -> list[v2.ToolCallLocation]:
    """v1 tool call locations as v2 (same shape)."""
    return [recode(location, v2.ToolCallLocation) for location in locations]


def tool_call_fields_from_v1(call: v1.ToolCallUpdate) -> v2.ToolCallFields:
    """A v1 tool call patch as the v2 patch of the same call: every field it carries.

    v1 reads ``null`` as "unchanged", so a ``null`` field is left out (v2 would read it
    as a clear); ``content`` and ``locations`` are converted item by item.
    """

    def keep(value: Any) -> Any:
        return UNSET if value is None else value

    content, locations = keep(call.content), keep(call.locations)
    return v2.ToolCallFields(
        tool_call_id=call.tool_call_id,
        title=keep(call.title),
        kind=keep(call.kind),
        status=keep(call.status),
        content=tool_content_from_v1(content) if content is not UNSET else UNSET,
        locations=locations_from_v1(locations) if locations is not UNSET else UNSET,
        raw_input=keep(call.raw_input),
        raw_output=keep(call.raw_output),
        meta=keep(call.meta),
    )

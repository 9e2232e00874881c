"""The chat's view of background work (RFD "v2 Background Work"): the status-line count,
the ``/bg`` listing and the item ``/cancel-bg N`` picks (pure: no IO).

Items are numbered in the agent's ``background`` order, from 1, as ``/bg`` lists them;
every text the agent chose (titles, commands, ids) is sanitized before it is shown.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text

from acp2 import sanitize
from acp2.state import BackgroundItem, background_items
from acp2.ui.choose import picked

__all__ = ["KIND_NAMES", "listing", "pick", "status_part"]

#: How each item kind is named on screen (others: their ``type`` as sent).
KIND_NAMES = {"tool_call": "tool call", "terminal": "terminal", "subagent": "subagent"}


def status_part(state: Any) -> str | None:
    """``"2 in background"`` for the status line, or None when nothing is listed."""
    count = len(state.background or ())
    return f"{count} in background" if count else None


def _label(item: BackgroundItem) -> str:
    kind = KIND_NAMES.get(item.kind, sanitize.line(item.kind))
    name = item.title or item.item_id or ""
    return f"{kind} “{sanitize.line(name)}”" if name else kind


def listing(state: Any) -> list[Text]:
    """The lines ``/bg`` prints: one per item, or one line saying why there are none."""
    if state.background is None:
        return [Text("the agent does not report background work", style="dim")]
    items = background_items(state)
    if not items:
        return [Text("nothing runs in the background", style="dim")]
    lines = []
    for number, item in enumerate(items, 1):
        line = Text(f" {number:>2} ", style="bold")
        line.append(_label(item))
        hint = f"  /cancel-bg {number}" if item.cancellable else "  (cannot be cancelled)"
        line.append(hint, style="dim")
        lines.append(line)
    return lines


def pick(state: Any, arg: str) -> tuple[BackgroundItem | None, str]:
    """The item ``/cancel-bg arg`` names, and the label to show (or why there is none)."""
    items = background_items(state)
    index = picked(arg, len(items))
    if index is None:
        if not items:
            return None, "nothing runs in the background"
        return None, f"usage: /cancel-bg N, N from 1 to {len(items)} (/bg lists them)"
    item = items[index]
    label = _label(item)
    if not item.cancellable:
        return None, f"the agent does not let {label} be cancelled"
    return item, label

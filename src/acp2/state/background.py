"""The background work a session reports, resolved against the entities it names (pure).

RFD "v2 Background Work" (D-13, PL-25): each ``state_update`` may carry ``background``,
the complete list of work running outside the foreground. :attr:`SessionState.background
<acp2.state.SessionState.background>` keeps the last list as sent (``None``: never
reported, which means *unknown*, not "nothing runs"); :func:`background_items` resolves
it into what a client shows: what each item is, its title, and whether it may be
cancelled now (TC-13, TM-10: only while the entity advertises ``capabilities.cancel``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import msgspec
from msgspec import UNSET

from acp2.schema import BackgroundSubagent, BackgroundTerminal, BackgroundToolCall

if TYPE_CHECKING:
    from acp2.state.session import SessionState

__all__ = ["BackgroundItem", "background_items", "cancel_advertised"]


@dataclass(frozen=True, slots=True)
class BackgroundItem:
    """One listed piece of background work.

    ``kind`` is ``tool_call``, ``terminal``, ``subagent`` or the ``type`` of an unknown
    item (which still counts as running work); ``item_id`` the id it names (None for an
    unknown item); ``title`` what to show (the tool call's title, the terminal's command,
    the child session's title; the agent's text, unsanitized); ``cancellable`` whether
    ``cancel_tool_call`` / ``cancel_terminal`` may be sent for it now.
    """

    kind: str
    item_id: str | None
    title: str | None
    cancellable: bool


def cancel_advertised(entity: Any) -> bool:
    """True when a tool call or terminal state advertises ``capabilities.cancel`` and has
    not ended (an agent should withdraw it then; a client never relies on that)."""
    if entity is None:
        return False
    ended = entity.exited if hasattr(entity, "exited") else entity.finished
    capabilities = entity.capabilities
    cancel = getattr(capabilities, "cancel", UNSET) if capabilities is not None else UNSET
    return not ended and cancel is not UNSET and cancel is not None


def background_items(state: SessionState) -> list[BackgroundItem]:
    """The items of the last reported ``background`` list, in its order (``[]`` when none
    or when the agent never reported it: check ``state.background is None`` for that)."""
    return [_item(state, entry) for entry in state.background or ()]


def _item(state: SessionState, entry: Any) -> BackgroundItem:
    if isinstance(entry, BackgroundToolCall):
        call = state.tool_calls.get(entry.tool_call_id)
        title = call.title if call is not None else None
        return BackgroundItem("tool_call", entry.tool_call_id, title, cancel_advertised(call))
    if isinstance(entry, BackgroundTerminal):
        term = state.terminals.get(entry.terminal_id)
        command = term.command if term is not None else None
        return BackgroundItem("terminal", entry.terminal_id, command, cancel_advertised(term))
    if isinstance(entry, BackgroundSubagent):
        child = state.subagents.get(entry.session_id)
        title = child.title if child is not None else None
        return BackgroundItem("subagent", entry.session_id, title, False)
    kind = _raw_type(entry)
    return BackgroundItem(kind, None, None, False)


def _raw_type(entry: Any) -> str:
    """The ``type`` of an unknown item kept as ``msgspec.Raw`` (``?`` if unreadable)."""
    try:
        value = msgspec.json.decode(entry) if isinstance(entry, msgspec.Raw) else entry
    except msgspec.DecodeError:
        return "?"
    kind = value.get("type") if isinstance(value, dict) else None
    return kind if isinstance(kind, str) else "?"

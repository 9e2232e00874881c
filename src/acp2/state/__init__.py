"""Client-side session state and its pure reducer (no IO, no event loop).

Feed every ``session/update`` of one session to :func:`reduce`, in arrival order, and
read :class:`SessionState` to render it: the timeline of messages, tool calls, plans and
compactions; terminals; usage; config options; commands; session info; foreground state.

    state = SessionState()
    for note in notifications:
        reduce(state, note)
    print(state.agent_text())
"""

from __future__ import annotations

from acp2.state._patch import patch_meta
from acp2.state.background import BackgroundItem, background_items, cancel_advertised
from acp2.state.entities import (
    FINAL_TOOL_STATUSES,
    ChildSession,
    CompactionState,
    MessageKind,
    MessageState,
    PlanState,
    SessionMessageState,
    TerminalState,
    TokenTotals,
    ToolCallState,
    UsageState,
)
from acp2.state.reducer import reduce, reduce_agent_text
from acp2.state.replay import ReplayMerge, entity_key
from acp2.state.session import MAX_NOTICES, Entry, SessionState
from acp2.state.tools import apply_permission_subject, apply_tool_call, mark_cancelled

__all__ = [
    "FINAL_TOOL_STATUSES",
    "MAX_NOTICES",
    "BackgroundItem",
    "ChildSession",
    "CompactionState",
    "Entry",
    "MessageKind",
    "MessageState",
    "PlanState",
    "ReplayMerge",
    "SessionMessageState",
    "SessionState",
    "TerminalState",
    "TokenTotals",
    "ToolCallState",
    "UsageState",
    "apply_permission_subject",
    "apply_tool_call",
    "background_items",
    "cancel_advertised",
    "entity_key",
    "mark_cancelled",
    "patch_meta",
    "reduce",
    "reduce_agent_text",
]

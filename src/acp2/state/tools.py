"""Tool calls and display-only terminals: their patch handlers and client-side actions.

Kept apart from :mod:`acp2.state.reducer` because permission subjects (PR-04) and
``session/cancel`` (PL-15) patch tool calls outside the update stream.
"""

from __future__ import annotations

import binascii
from typing import Any

import msgspec
from msgspec import UNSET

from acp2.schema.permission import ToolCallPermissionSubject
from acp2.schema.states import BackgroundToolCall
from acp2.schema.terminal import TerminalOutputChunk, TerminalUpdate
from acp2.schema.tools import ToolCallContentChunk, ToolCallFields
from acp2.state._patch import patch_meta
from acp2.state.session import SessionState

__all__ = [
    "append_terminal_output",
    "append_tool_call_content",
    "apply_permission_subject",
    "apply_terminal",
    "apply_tool_call",
    "mark_cancelled",
]


# -- tool calls (TC-*) ------------------------------------------------------------------


def apply_tool_call(state: SessionState, update: ToolCallFields) -> None:
    """Create or patch the tool call ``update.tool_call_id`` (TC-02..TC-05, TC-10).

    Used for ``tool_call_update`` and for permission ``tool_call`` subjects (PR-04).
    ``kind: null`` resets to ``other``, ``status: null`` to ``pending``; ``content`` and
    ``locations`` are replaced whole (``null`` / ``[]`` clear); a location ``line: 0``
    is stored as no line.
    """
    call = state.tool_call(update.tool_call_id)
    if update.title is not UNSET:
        call.title = update.title
    if update.kind is not UNSET:
        call.kind = "other" if update.kind is None else update.kind
    if update.status is not UNSET:
        call.status = "pending" if update.status is None else update.status
    if update.content is not UNSET:
        call.content = list(update.content) if update.content else []
    if update.locations is not UNSET:
        call.locations = [_location(loc) for loc in update.locations or ()]
    if update.raw_input is not UNSET:
        call.raw_input = update.raw_input
    if update.raw_output is not UNSET:
        call.raw_output = update.raw_output
    if update.name is not UNSET:
        call.name = update.name
    if update.capabilities is not UNSET:
        call.capabilities = update.capabilities
    call.meta = patch_meta(call.meta, update.meta)


def _location(loc: Any) -> Any:
    return msgspec.structs.replace(loc, line=None) if loc.line == 0 else loc


def append_tool_call_content(state: SessionState, update: ToolCallContentChunk) -> None:
    """Append one content item to a tool call, creating the call if unseen (TC-05)."""
    state.tool_call(update.tool_call_id).content.append(update.content)


# -- terminals (TM-*) -------------------------------------------------------------------


def _b64(data: str) -> bytes | None:
    try:
        return binascii.a2b_base64(data)
    except (binascii.Error, ValueError):
        return None


def apply_terminal(state: SessionState, update: TerminalUpdate) -> None:
    """Create or patch the terminal ``update.terminal_id`` (TM-03, TM-05, TM-07, TM-10).

    ``output`` is a snapshot: it replaces every byte and restarts UTF-8 decoding (``null``
    empties it; undecodable base64 is ignored). ``exitStatus`` marks the terminal exited.
    """
    term = state.terminal(update.terminal_id)
    if update.command is not UNSET:
        term.command = update.command
    if update.cwd is not UNSET:
        term.cwd = update.cwd
    output = update.output
    if output is not UNSET:
        data = b"" if output is None else _b64(output.data)
        if data is not None:
            term.replace_output(data)
            term.output_meta = None if output is None or output.meta is UNSET else output.meta
    if update.exit_status is not UNSET:
        term.exit_status = update.exit_status
    if update.size is not UNSET:
        term.size = update.size
    if update.capabilities is not UNSET:
        term.capabilities = update.capabilities
    term.meta = patch_meta(term.meta, update.meta)


def append_terminal_output(state: SessionState, update: TerminalOutputChunk) -> None:
    """Decode one chunk's base64 on its own and append the bytes (TM-02, TM-06).

    An unseen terminal is created, so output that arrives before the tool call that
    references it is kept. Undecodable base64 is dropped.
    """
    data = _b64(update.data)
    term = state.terminal(update.terminal_id)
    if data:
        term.append(data)


# -- client-side actions (PR-04, PL-15) -------------------------------------------------


def apply_permission_subject(state: SessionState, subject: Any) -> SessionState:
    """Apply a permission request's ``subject`` to ``state`` and return ``state`` (PR-04).

    A ``tool_call`` subject patches the stored tool call exactly like a
    ``tool_call_update`` (an unseen id creates it); call this before showing the prompt.
    ``command`` subjects, unknown (raw) subjects, ``None`` and ``UNSET`` change nothing.
    """
    if isinstance(subject, ToolCallPermissionSubject):
        apply_tool_call(state, subject.tool_call)
    return state


def mark_cancelled(state: SessionState) -> list[str]:
    """Mark every unfinished tool call of the current foreground work ``cancelled`` (PL-15).

    Call it when sending ``session/cancel``. Calls first seen while idle, calls of earlier
    work and calls listed as background work (Nov, D-15) are left alone; nothing changes
    while the session is idle. Returns the ids of the calls it changed, in timeline order.
    """
    if not state.busy:
        return []
    background = {
        item.tool_call_id for item in state.background or () if isinstance(item, BackgroundToolCall)
    }
    changed = []
    for call in state.tool_calls.values():
        if call.work == state.work and not call.finished and call.tool_call_id not in background:
            call.status = "cancelled"
            changed.append(call.tool_call_id)
    return changed

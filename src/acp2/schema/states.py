"""Foreground state: the ``state_update`` snapshot and Nov background-work lists (PL-*).

The schema's ``StateUpdate`` is a union on ``state`` (``RunningStateUpdate``,
``IdleStateUpdate``, ``RequiresActionStateUpdate``, other); the variants only differ in
which optional fields they carry, so it is one class here with ``state: str``: unknown
states decode too (the client shows a generic busy state, PL-11).
"""

from __future__ import annotations

from typing import Annotated, TypeAlias

import msgspec
from msgspec import UNSET, Raw, UnsetType

from acp2.schema._base import LENIENT, Model
from acp2.schema.common import MetaField, SessionId, TerminalId, ToolCallId, UInt
from acp2.schema.jsonrpc import Error

__all__ = [
    "BackgroundSubagent",
    "BackgroundTerminal",
    "BackgroundToolCall",
    "BackgroundWork",
    "StateUpdate",
    "Usage",
]


class BackgroundTerminal(Model, tag_field="type", tag="terminal", gc=False, kw_only=True):
    """Background work item ``{type:"terminal", terminalId}`` (Nov)."""

    terminal_id: TerminalId
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class BackgroundToolCall(Model, tag_field="type", tag="tool_call", gc=False, kw_only=True):
    """Background work item ``{type:"tool_call", toolCallId}`` (Nov)."""

    tool_call_id: ToolCallId
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class BackgroundSubagent(Model, tag_field="type", tag="subagent", gc=False, kw_only=True):
    """Background work item ``{type:"subagent", sessionId}`` (Preview): a detached child
    session that still runs. No vendored stable schema has it: modelled from the SDK 2.4.0
    unstable schema, which the generated Preview schema promotes (the Preview made
    subagents a v2 baseline). acp2 agents never send it; clients accept it."""

    session_id: SessionId
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


#: Work running outside the foreground (Nov, Preview); an unknown ``type`` is kept as
#: ``msgspec.Raw`` and still counts as running work.
BackgroundWork: TypeAlias = BackgroundTerminal | BackgroundToolCall | BackgroundSubagent | Raw


class Usage(Model, gc=False, kw_only=True):
    """Token counts of the foreground work an idle ``state_update`` ends (Preview, unstable).

    Modelled from the Rust schema crate's ``v2::Usage`` (docs.rs
    ``agent-client-protocol-schema``, feature ``unstable_end_turn_token_usage``) and the
    RFD page ``rfds/end-turn-token-usage``; no vendored schema has it. The three totals
    are required; ``thought_tokens`` (reasoning) and the prompt-cache counts
    ``cached_read_tokens`` / ``cached_write_tokens`` are optional, and a malformed one reads
    as not reported. The page defines no cost here: a session's cost stays on
    ``usage_update``. The counts cover one piece of foreground work, not the session.
    """

    total_tokens: UInt
    input_tokens: UInt
    output_tokens: UInt
    thought_tokens: Annotated[UInt | UnsetType | None, LENIENT] = UNSET
    cached_read_tokens: Annotated[UInt | UnsetType | None, LENIENT] = UNSET
    cached_write_tokens: Annotated[UInt | UnsetType | None, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class StateUpdate(Model, tag_field="sessionUpdate", tag="state_update", gc=False, kw_only=True):
    """Session update ``state_update``: a snapshot of the session's foreground state.

    ``state`` is ``running``, ``idle``, ``requires_action`` or a custom / future value.
    On ``idle``, ``stop_reason`` says why foreground work ended (an open enum; a malformed
    value counts as not reported) and, for Nov's ``error``, ``error`` says what failed.
    ``background`` (Nov) is the complete list of background work; ``UNSET`` or ``None``
    means "not reported", ``[]`` means none. ``usage`` (Preview, on ``idle``) is the token
    count of the work that ended (:class:`Usage`); ``UNSET`` or ``None`` means not reported,
    and a malformed value reads as not reported.
    """

    state: str
    stop_reason: Annotated[str | UnsetType | None, LENIENT] = UNSET
    error: Annotated[Error | UnsetType | None, LENIENT] = UNSET
    background: Annotated[list[BackgroundWork] | UnsetType | None, LENIENT] = UNSET
    usage: Annotated[Usage | UnsetType | None, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")

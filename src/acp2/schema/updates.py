"""``session/update``: the ``SessionUpdate`` open union and the remaining update kinds.

Every variant is a struct tagged by ``sessionUpdate``. A variant this library does not
know (``_custom`` or a future ACP kind) decodes to ``msgspec.Raw`` and re-encodes
unchanged (EX-07); read its tag with :func:`acp2.schema.tag_of`.
"""

from __future__ import annotations

from typing import Annotated, Final, TypeAlias, get_args

import msgspec
from msgspec import UNSET, Raw, UnsetType

from acp2.schema._base import LENIENT, SKIP_INVALID, Model
from acp2.schema.commands import AvailableCommandsUpdate
from acp2.schema.common import AbsolutePath, CompactionId, MetaField, SessionId, UInt
from acp2.schema.config import ConfigOptionUpdate
from acp2.schema.content import ContentBlock
from acp2.schema.jsonrpc import Error
from acp2.schema.messages import (
    AgentMessage,
    AgentMessageChunk,
    AgentThought,
    AgentThoughtChunk,
    UserMessage,
    UserMessageChunk,
)
from acp2.schema.plan import PlanUpdate
from acp2.schema.session_messages import SessionMessage, SessionMessageChunk
from acp2.schema.states import BackgroundWork, StateUpdate, Usage
from acp2.schema.terminal import TerminalOutputChunk, TerminalUpdate
from acp2.schema.tools import ToolCallContentChunk, ToolCallUpdate

__all__ = [
    "SESSION_UPDATE_KINDS",
    "CompactionSummaryChunk",
    "CompactionUpdate",
    "Cost",
    "Notice",
    "ReplayComplete",
    "SessionInfoUpdate",
    "SessionUpdate",
    "SubagentCancelCapabilities",
    "SubagentCapabilities",
    "SubagentState",
    "SubagentUpdate",
    "UpdateSessionNotification",
    "UsageUpdate",
]


class SessionInfoUpdate(
    Model, tag_field="sessionUpdate", tag="session_info_update", gc=False, kw_only=True
):
    """Session update ``session_info_update``: patch the session's title / update time."""

    title: Annotated[str | UnsetType | None, LENIENT] = UNSET
    #: RFC 3339 date-time.
    updated_at: Annotated[str | UnsetType | None, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class Cost(Model, gc=False, kw_only=True):
    """Cumulative session cost: ``amount`` in ``currency`` (ISO 4217; Nov allows any unit)."""

    amount: float
    currency: str
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class UsageUpdate(Model, tag_field="sessionUpdate", tag="usage_update", gc=False, kw_only=True):
    """Session update ``usage_update``: context tokens ``used`` of ``size``, and ``cost``.

    ``cost``: ``UNSET`` keeps the last value, ``None`` clears it (Nov, US-04).
    """

    used: UInt
    size: UInt
    cost: Annotated[Cost | UnsetType | None, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class Notice(Model, tag_field="sessionUpdate", tag="notice", gc=False, kw_only=True):
    """Session update ``notice`` (Nov): a fire-and-forget message for the user."""

    #: ``info``, ``warning``, ``error`` or a custom / future value.
    severity: str
    title: Annotated[str, msgspec.Meta(min_length=1)]
    description: Annotated[str | UnsetType | None, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class CompactionUpdate(
    Model, tag_field="sessionUpdate", tag="compaction_update", gc=False, kw_only=True
):
    """Session update ``compaction_update`` (Nov): create or patch a context compaction."""

    compaction_id: CompactionId
    #: ``in_progress``, ``completed``, ``failed``, ``cancelled`` or a custom / future value.
    status: str
    summary: Annotated[list[ContentBlock] | UnsetType | None, LENIENT, SKIP_INVALID] = UNSET
    error: Annotated[str | UnsetType | None, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class CompactionSummaryChunk(
    Model, tag_field="sessionUpdate", tag="compaction_summary_chunk", gc=False, kw_only=True
):
    """Session update ``compaction_summary_chunk`` (Nov): append to a compaction's summary."""

    compaction_id: CompactionId
    content: ContentBlock
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class ReplayComplete(
    Model, tag_field="sessionUpdate", tag="replay_complete", gc=False, kw_only=True
):
    """Session update ``replay_complete`` (Preview): the replay a resume asked for ended.

    Modelled from the published RFD page ``rfds/v2/session-replay-complete`` (Completed)
    and the Rust schema crate's ``v2::ReplayComplete`` (docs.rs): no vendored schema has
    it (not the Aug or Nov drafts, not the TypeScript SDK 2.4.0 schema), so both drafts
    see it as their ``other`` fallback, which makes it valid to send to either. An agent
    sends it exactly once per session for each ``session/resume`` with a ``replayFrom``
    cursor, after the last replayed update of that session and before the response (an
    empty replay too); a child session announced during the request gets its own marker
    under its own id. Every update of the session before it is replayed history, every one
    after it is live: the agent holds the session's live updates while it replays (one it
    sent before the request may still arrive first). Never sent without a cursor, nor when
    the replay could not finish: a replay that ends without it and without a successful
    response is truncated.
    """

    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class SubagentCancelCapabilities(Model, gc=False, kw_only=True):
    """Marker (Preview): the client may cancel this child's current work."""

    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class SubagentCapabilities(Model, gc=False, kw_only=True):
    """What a client may do to one child session (Preview); unset permits nothing."""

    cancel: Annotated[SubagentCancelCapabilities | UnsetType | None, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class SubagentState(Model, gc=False, kw_only=True):
    """A child's foreground state mirrored on its parent: the fields of ``state_update``
    without the ``sessionUpdate`` tag."""

    state: str
    stop_reason: Annotated[str | UnsetType | None, LENIENT] = UNSET
    error: Annotated[Error | UnsetType | None, LENIENT] = UNSET
    background: Annotated[list[BackgroundWork] | UnsetType | None, LENIENT] = UNSET
    #: The child's token counts for its work that ended (Preview, see :class:`Usage`).
    usage: Annotated[Usage | UnsetType | None, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class SubagentUpdate(
    Model, tag_field="sessionUpdate", tag="subagent_update", gc=False, kw_only=True
):
    """Session update ``subagent_update`` (Preview, subagents made baseline v2): the
    session created and owns the child ``session_id``, or patches that association.

    Modelled from the TypeScript SDK 2.4.0's unstable v2 schema (the Preview made it
    baseline; no stable vendored schema has it, so both drafts see their ``other``
    fallback). Only ``session_id`` is required; every other field is a patch: omitted
    leaves the stored value, ``None`` clears it (``state: None`` removes the report without
    meaning idle), a value replaces it. The first one for an unknown id announces the child
    before any message bearing its id; the child's own updates then arrive under its id.
    """

    session_id: SessionId
    title: Annotated[str | UnsetType | None, LENIENT] = UNSET
    description: Annotated[str | UnsetType | None, LENIENT] = UNSET
    capabilities: Annotated[SubagentCapabilities | UnsetType | None, LENIENT] = UNSET
    state: Annotated[SubagentState | UnsetType | None, LENIENT] = UNSET
    cwd: Annotated[AbsolutePath | UnsetType | None, LENIENT] = UNSET
    additional_directories: Annotated[list[AbsolutePath] | UnsetType | None, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


#: One ``session/update`` payload; an unknown ``sessionUpdate`` is kept as ``msgspec.Raw``.
SessionUpdate: TypeAlias = (
    UserMessageChunk
    | UserMessage
    | AgentMessageChunk
    | AgentMessage
    | AgentThoughtChunk
    | AgentThought
    | StateUpdate
    | ToolCallContentChunk
    | ToolCallUpdate
    | TerminalUpdate
    | TerminalOutputChunk
    | PlanUpdate
    | AvailableCommandsUpdate
    | ConfigOptionUpdate
    | SessionInfoUpdate
    | UsageUpdate
    | Notice
    | CompactionUpdate
    | CompactionSummaryChunk
    | ReplayComplete
    | SubagentUpdate
    | SessionMessage
    | SessionMessageChunk
    | Raw
)

#: Every ``sessionUpdate`` tag modelled here (``notice`` and the two ``compaction_*`` are
#: Nov-only; ``replay_complete``, ``subagent_update`` and the two ``session_message*`` are
#: the Preview's and in no stable vendored schema).
SESSION_UPDATE_KINDS: Final[tuple[str, ...]] = tuple(
    str(cls.__struct_config__.tag) for cls in get_args(SessionUpdate) if cls is not Raw
)


class UpdateSessionNotification(Model, gc=False, kw_only=True):
    """Params of ``session/update``: one ``update`` for the session ``sessionId``."""

    session_id: SessionId
    update: SessionUpdate
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")

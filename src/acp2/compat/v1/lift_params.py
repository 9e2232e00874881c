"""The shape a v1 ``session/update`` is decoded with on its way to a v2 client.

:class:`SessionNotification` reads the same JSON as
:class:`acp2.compat.v1.schema.SessionNotification`, with one difference: a message or
thought chunk whose content is a ``text`` block gets that block as the v2
:class:`acp2.schema.TextContent` straight from the bytes. A v1 text block and a v2 one
have the same fields (``text``, ``annotations``, ``_meta``) and v2's checks of them are
at least v1's, so this is what :func:`acp2.compat.v1.convert.block_from_v1` makes of the
v1 block, without the v1 block in between: the streamed chunks cost one decode and one
v2 chunk each (:meth:`acp2.compat.v1.lift.V1Lifter.lift` takes these chunk types too,
and hands such a block on as it is: the decode made it for this update alone). Every
other block type and update kind is v1's own model; an unknown kind stays
``msgspec.Raw``.

Not a v1 model (the schema's models are in :mod:`acp2.compat.v1.schema`): only the
back bridge's reading of its agent's updates.
"""

from __future__ import annotations

from typing import Annotated, TypeAlias

import msgspec
from msgspec import UNSET, Raw, UnsetType

import acp2.compat.v1.schema as v1
import acp2.schema as v2
from acp2.compat.v1.schema.common import LENIENT, MessageId, MetaField, Model, SessionId

__all__ = [
    "AgentMessageChunk",
    "AgentThoughtChunk",
    "ContentBlock",
    "SessionNotification",
    "SessionUpdate",
    "UserMessageChunk",
]

#: v1's ``ContentBlock`` with the ``text`` block read as v2's.
ContentBlock: TypeAlias = (
    v2.TextContent | v1.ImageContent | v1.AudioContent | v1.ResourceLink | v1.EmbeddedResource | Raw
)


class _Chunk(Model, gc=False, kw_only=True):
    """v1's chunk fields (:class:`acp2.compat.v1.schema.ContentChunk`), :data:`ContentBlock`."""

    content: ContentBlock
    message_id: Annotated[MessageId | UnsetType | None, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class UserMessageChunk(_Chunk, tag_field="sessionUpdate", tag="user_message_chunk"):
    """v1 ``user_message_chunk`` (see the module)."""


class AgentMessageChunk(_Chunk, tag_field="sessionUpdate", tag="agent_message_chunk"):
    """v1 ``agent_message_chunk`` (see the module)."""


class AgentThoughtChunk(_Chunk, tag_field="sessionUpdate", tag="agent_thought_chunk"):
    """v1 ``agent_thought_chunk`` (see the module)."""


#: v1's ``SessionUpdate`` with the chunks above.
SessionUpdate: TypeAlias = (
    UserMessageChunk
    | AgentMessageChunk
    | AgentThoughtChunk
    | v1.ToolCall
    | v1.SessionToolCallUpdate
    | v1.Plan
    | v1.AvailableCommandsUpdate
    | v1.CurrentModeUpdate
    | v1.ConfigOptionUpdate
    | v1.SessionInfoUpdate
    | v1.UsageUpdate
    | Raw
)


class SessionNotification(Model, gc=False, kw_only=True):
    """Params of v1 ``session/update`` as the bridge reads them (see the module)."""

    session_id: SessionId
    update: SessionUpdate
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")

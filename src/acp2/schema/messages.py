"""Message updates: whole-message upserts and streamed chunks (MU-01..MU-09).

The schema has one ``ContentChunk`` object for the three chunk updates; here each tag has
its own class (msgspec dispatches on the tag) and they share :class:`ContentChunk` as
their base. Likewise the three whole-message upserts share :class:`MessageUpdate`.
Messages are keyed by ``(kind, messageId)`` (MU-03).
"""

from __future__ import annotations

from typing import Annotated

import msgspec
from msgspec import UNSET, UnsetType

from acp2.schema._base import LENIENT, SKIP_INVALID, Model
from acp2.schema.common import MessageId, MetaField
from acp2.schema.content import ContentBlock

__all__ = [
    "AgentMessage",
    "AgentMessageChunk",
    "AgentThought",
    "AgentThoughtChunk",
    "ContentChunk",
    "MessageUpdate",
    "UserMessage",
    "UserMessageChunk",
]


class ContentChunk(Model, gc=False, kw_only=True):
    """Fields of a message chunk: append one ``content`` block to message ``messageId``.

    Its ``_meta`` belongs to the chunk only. Use the tagged subclasses on the wire.
    """

    message_id: MessageId
    content: ContentBlock
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class UserMessageChunk(
    ContentChunk, tag_field="sessionUpdate", tag="user_message_chunk", kw_only=True
):
    """Session update ``user_message_chunk``: append a block to a user message."""


class AgentMessageChunk(
    ContentChunk, tag_field="sessionUpdate", tag="agent_message_chunk", kw_only=True
):
    """Session update ``agent_message_chunk``: append a block to an agent message."""


class AgentThoughtChunk(
    ContentChunk, tag_field="sessionUpdate", tag="agent_thought_chunk", kw_only=True
):
    """Session update ``agent_thought_chunk``: append a block to an agent thought."""


class MessageUpdate(Model, gc=False, kw_only=True):
    """Fields of a whole-message upsert keyed by ``messageId``; use the tagged subclasses.

    ``content``: ``UNSET`` keeps the current content, ``None`` or ``[]`` clears it, a list
    replaces everything including chunk-accumulated content (MU-04).
    """

    message_id: MessageId
    content: Annotated[list[ContentBlock] | UnsetType | None, LENIENT, SKIP_INVALID] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class UserMessage(MessageUpdate, tag_field="sessionUpdate", tag="user_message", kw_only=True):
    """Session update ``user_message``: upsert a user message (the prompt acknowledgement)."""


class AgentMessage(MessageUpdate, tag_field="sessionUpdate", tag="agent_message", kw_only=True):
    """Session update ``agent_message``: upsert an agent message (replay, correction)."""


class AgentThought(MessageUpdate, tag_field="sessionUpdate", tag="agent_thought", kw_only=True):
    """Session update ``agent_thought``: upsert an agent thought."""

"""Messages between sessions (Preview subagents): ``session_message`` and its chunk.

A parent and its child sessions exchange messages (a task handed to a child, the
child's report back). Each session's transcript shows such a message under the
session's own ``messageId``; ``senderSessionId`` / ``recipientSessionId`` say which
sessions it went between, and ``senderMessageId`` / ``recipientMessageId`` name the same
message in the other session's transcript. Messages have their own id space, like the
user, agent and thought ones.

Modelled from the Rust schema crate's ``v2::SessionMessage`` and
``v2::SessionMessageChunk`` (docs.rs ``agent-client-protocol-schema``, 1.15 to 1.22,
feature ``unstable_subagents``) and the Completed Subagent Sessions RFD (``rfds/subagents``,
``protocol/v2/subagents``, ``announcements/subagents-stabilized``). No vendored schema has
them, so both drafts see them as their ``other`` fallback: valid to send to any v2 peer,
which still may not know how to show them.
"""

from __future__ import annotations

from typing import Annotated

import msgspec
from msgspec import UNSET, UnsetType

from acp2.schema._base import LENIENT, SKIP_INVALID, Model
from acp2.schema.common import MessageId, MetaField, SessionId
from acp2.schema.content import ContentBlock

__all__ = ["SessionMessage", "SessionMessageChunk"]

_Id = Annotated[str | UnsetType | None, LENIENT]


class SessionMessage(
    Model, tag_field="sessionUpdate", tag="session_message", gc=False, kw_only=True
):
    """Session update ``session_message``: upsert the inter-session message ``messageId``.

    Every field but ``message_id`` is a patch: omitted keeps the stored value, ``None``
    clears it, a value replaces it. ``content`` replaces the whole content (``None`` or
    ``[]`` clears it), like the other message upserts.
    """

    message_id: MessageId
    sender_session_id: _Id = UNSET
    recipient_session_id: _Id = UNSET
    #: On the recipient's copy: the message's id in the sender's transcript.
    sender_message_id: _Id = UNSET
    #: On the sender's copy: the message's id in the recipient's transcript.
    recipient_message_id: _Id = UNSET
    content: Annotated[list[ContentBlock] | UnsetType | None, LENIENT, SKIP_INVALID] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class SessionMessageChunk(
    Model, tag_field="sessionUpdate", tag="session_message_chunk", gc=False, kw_only=True
):
    """Session update ``session_message_chunk``: append one ``content`` block to the
    inter-session message ``messageId``. Its ``_meta`` belongs to the chunk only.

    The newest v2 chunk (crate 1.13 on) carries only content: the ids come from
    ``session_message`` upserts, before, between or after the chunks. Earlier drafts
    (and v1's chunk) also carried the ids, so they are accepted here: a value sets the
    stored one, omitted or ``None`` keeps it. acp2 never sends them on a chunk.
    """

    message_id: MessageId
    sender_session_id: Annotated[SessionId | UnsetType | None, LENIENT] = UNSET
    recipient_session_id: Annotated[SessionId | UnsetType | None, LENIENT] = UNSET
    sender_message_id: _Id = UNSET
    recipient_message_id: _Id = UNSET
    content: ContentBlock
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")

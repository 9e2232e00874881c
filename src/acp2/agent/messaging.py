"""Messages between a session and its child sessions (Preview subagents).

A message between two sessions shows in both transcripts, each copy under that
session's own ``messageId``: the sender's copy names the recipient
(``recipientSessionId``, ``recipientMessageId``), the recipient's copy names the sender
(``senderSessionId``, ``senderMessageId``). :func:`send_message` upserts both copies
(``session_message``) and returns a :class:`SessionMessageHandle`, whose
:meth:`~SessionMessageHandle.append` streams more content to both as
``session_message_chunk`` (the ids stay on the upserts: the newest chunk carries none).
Both copies are recorded in history, so a resume replays each as one whole message.

Only a parent and its own child may message each other: that is the link the client
was told about (``subagent_update``) before anything bearing the child's id. The
recipient keeps what it received in :attr:`AgentSession.inbox
<acp2.agent.session.AgentSession.inbox>`, for the author's code (the delegated task, the
child's report) to read.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

from acp2.agent import arguments
from acp2.errors import LocalProtocolError
from acp2.schema import SessionMessage, SessionMessageChunk, TextContent

if TYPE_CHECKING:
    from acp2.schema import ContentBlock

__all__ = ["Party", "ReceivedMessage", "SessionMessageHandle", "send_message"]


class Party(Protocol):
    """What a message between sessions needs of each session (an
    :class:`~acp2.agent.session.AgentSession`; named structurally so that this module and
    the session's do not refer to each other)."""

    @property
    def id(self) -> str:
        """The session id."""

    @property
    def closed(self) -> bool:
        """True once the session is closed."""

    @property
    def parent(self) -> Party | None:
        """The session that spawned this one, or None."""

    def new_message_id(self, kind: Literal["session"]) -> str:
        """A fresh message id."""

    async def send(self, update: Any) -> None:
        """Send (and record) one update of the session."""

    def receive_message(self, message: ReceivedMessage) -> None:
        """Keep a message another session sent this one."""


@dataclass(slots=True)
class ReceivedMessage:
    """A message another session sent this one: who sent it (``sender``, a session id),
    its id in this session's transcript (``message_id``) and its ``content`` so far
    (appended to in place as the sender streams more)."""

    sender: str
    message_id: str
    content: list[ContentBlock]

    @property
    def text(self) -> str:
        """The text blocks of ``content``, joined."""
        return "".join(b.text for b in self.content if isinstance(b, TextContent))


class SessionMessageHandle:
    """One message sent from ``sender`` to ``recipient``: ``sender_message_id`` and
    ``recipient_message_id`` are its ids in their transcripts."""

    __slots__ = ("received", "recipient", "recipient_message_id", "sender", "sender_message_id")

    def __init__(self, sender: Party, recipient: Party, received: ReceivedMessage) -> None:
        self.sender = sender
        self.recipient = recipient
        self.sender_message_id = sender.new_message_id("session")
        self.recipient_message_id = received.message_id
        self.received = received

    async def append(self, content: str | ContentBlock) -> None:
        """Stream one more block (a string is a text block) to both copies.

        Raises ``TypeError`` (nothing sent) for anything else."""
        (block,) = arguments.content_blocks([content], "append()")
        self.received.content.append(block)
        await self.sender.send(
            SessionMessageChunk(message_id=self.sender_message_id, content=block)
        )
        await self.recipient.send(
            SessionMessageChunk(message_id=self.recipient_message_id, content=block)
        )


def _check_related(sender: Party, recipient: Party) -> None:
    if recipient.parent is not sender and sender.parent is not recipient:
        raise LocalProtocolError(
            f"{sender.id} may message only its parent and its own children, not {recipient.id}"
        )
    if sender.closed or recipient.closed:
        raise LocalProtocolError("a message between closed sessions cannot be sent")


async def send_message(
    sender: Party,
    recipient: Party,
    content: str | ContentBlock | Sequence[str | ContentBlock],
) -> SessionMessageHandle:
    """Send ``content`` from ``sender`` to ``recipient`` (its parent or its own child):
    the sender's copy goes out first, then the recipient's, which also lands in
    ``recipient.inbox``. Returns the handle that streams more.

    Raises ``LocalProtocolError`` (sending nothing) for sessions that are not parent and
    child, or closed; ``TypeError`` for content that is not text or content blocks."""
    _check_related(sender, recipient)
    blocks = arguments.content_blocks(content, "send_message()")
    received = ReceivedMessage(sender.id, recipient.new_message_id("session"), list(blocks))
    handle = SessionMessageHandle(sender, recipient, received)
    mine = SessionMessage(
        message_id=handle.sender_message_id,
        sender_session_id=sender.id,
        recipient_session_id=recipient.id,
        recipient_message_id=received.message_id,
        content=list(blocks),
    )
    theirs = SessionMessage(
        message_id=received.message_id,
        sender_session_id=sender.id,
        recipient_session_id=recipient.id,
        sender_message_id=handle.sender_message_id,
        content=list(blocks),
    )
    await sender.send(mine)
    await recipient.send(theirs)
    recipient.receive_message(received)
    return handle

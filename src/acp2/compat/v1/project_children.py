"""Child sessions (Preview subagents) for a v1 client, both ways the client may want them.

ACP v1 has subagents only for a client that opts in with ``clientCapabilities.subagents:
{}`` (``announcements/subagents-stabilized``, ``protocol/v1/subagents``):

- **Opted in**: the announcement (``subagent_update``, the child's work state on it) and
  the messages between sessions (``session_message``, ``session_message_chunk``) go to
  the client as they are (:func:`passes`: same JSON in v1), and the child's own updates
  are projected under the child's id like any session's.
- **Not opted in**: the client knows nothing of the child. Its agent text is folded into
  the parent's tool call that names the child (``session`` content), as text appended to
  that call's content (:class:`ChildFolder`); the announcement, the messages between
  sessions and the child's other updates are not sent (counted). A child's permission
  request is asked in its parent's session (:meth:`ChildFolder.parent_of`).

Pure: no IO. The counters are those of ``docs/v1-projection.md``.
"""

from __future__ import annotations

from typing import Any, Final

import acp2.schema as v2
from acp2.compat.v1.convert import Drops

__all__ = ["CHILD_KINDS", "MAX_FOLDED", "ChildFolder", "passes", "wants_subagents"]

#: The v2 updates about children and their messages, said in v1 only to a client that
#: opted in.
CHILD_KINDS: Final = frozenset({v2.SubagentUpdate, v2.SessionMessage, v2.SessionMessageChunk})
#: The most children folded per connection (later ones are counted, not folded).
MAX_FOLDED: Final = 256


def wants_subagents(caps: Any) -> bool:
    """Whether v1 client capabilities opt in to subagents (``subagents: {}``)."""
    if caps is None or not hasattr(caps, "subagents"):
        return False
    return isinstance(caps.subagents, dict)


def passes(update: Any) -> bool:
    """True for an update about children that a v1 client that opted in gets as it is."""
    return type(update) in CHILD_KINDS


class ChildFolder:
    """For a v1 client without the opt-in: which parent tool call each child's text goes
    to. :meth:`note` reads every projected update of a parent; :meth:`fold` turns one
    update of a child into what to project on its parent instead."""

    __slots__ = ("_calls", "_parents", "dropped")

    def __init__(self, dropped: Drops) -> None:
        #: child id -> the session that announced it.
        self._parents: dict[str, str] = {}
        #: child id -> the parent's tool call that names it (once one does).
        self._calls: dict[str, str] = {}
        self.dropped = dropped

    def __contains__(self, session_id: str) -> bool:
        return session_id in self._parents

    def __len__(self) -> int:
        """How many children are known (a folder without any is false: nothing to note)."""
        return len(self._parents)

    def parent_of(self, session_id: str) -> str | None:
        """The session that announced the child ``session_id`` (None: not a known child)."""
        return self._parents.get(session_id)

    def note(self, parent_id: str, update: Any) -> None:
        """Take in one update of ``parent_id``: an announcement makes its child known,
        a tool call's ``session`` content links the child to that call."""
        kind = type(update)
        if kind is v2.SubagentUpdate:
            if update.session_id not in self._parents and len(self._parents) < MAX_FOLDED:
                self._parents[update.session_id] = parent_id
            return
        if kind is v2.ToolCallUpdate and isinstance(update.content, list):
            items = update.content
        elif kind is v2.ToolCallContentChunk:
            items = [update.content]
        else:
            return
        for item in items:
            if type(item) is v2.SessionReference and item.session_id in self._parents:
                self._calls[item.session_id] = update.tool_call_id

    def fold(self, child_id: str, update: Any) -> tuple[str, Any] | None:
        """What to project on the parent for ``update`` of the known child ``child_id``:
        ``(parent id, tool_call_content_chunk)`` carrying the child's agent text, or None
        (counted: ``subagent.unlinked`` before a call names the child, ``subagent.update``
        for anything but agent text)."""
        text = _agent_text(update)
        if text is None:
            self.dropped["subagent.update"] += 1
            return None
        call_id = self._calls.get(child_id)
        if call_id is None:
            self.dropped["subagent.unlinked"] += 1
            return None
        block = v2.Content(content=v2.TextContent(text=text))
        chunk = v2.ToolCallContentChunk(tool_call_id=call_id, content=block)
        return self._parents[child_id], chunk


def _agent_text(update: Any) -> str | None:
    """The text an agent message (chunk or whole) adds; None for anything else."""
    kind = type(update)
    if kind is v2.AgentMessageChunk:
        blocks = [update.content]
    elif kind is v2.AgentMessage and isinstance(update.content, list):
        blocks = update.content
    else:
        return None
    text = "".join(b.text for b in blocks if type(b) is v2.TextContent)
    return text or None

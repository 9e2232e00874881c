"""The entities of a session as a client renders them (pure, mutable, cheap to stream into).

Each class holds the *current* value of one keyed entity after every patch so far:
messages (keyed by kind and ``messageId``; messages between sessions are a kind of their
own), tool calls, display-only terminals, plans, compactions, usage and token totals.
The reducer in :mod:`acp2.state.reducer` is the only writer; readers treat every
attribute as read-only.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from msgspec import UNSET, Raw

from acp2.schema.content import TextContent

__all__ = [
    "FINAL_TOOL_STATUSES",
    "ChildSession",
    "CompactionState",
    "MessageKind",
    "MessageState",
    "PlanState",
    "SessionMessageState",
    "TerminalState",
    "TokenTotals",
    "ToolCallState",
    "UsageState",
]

#: The message id spaces (MU-03): ``user_message*``, ``agent_message*``, ``agent_thought*``,
#: and (Preview) ``session_message*``, the messages between sessions.
MessageKind = Literal["user", "agent", "thought", "session"]

#: Tool-call statuses after which nothing runs any more. Unknown ones count as running.
FINAL_TOOL_STATUSES: Final[frozenset[str]] = frozenset({"completed", "failed", "cancelled"})

_Utf8Decoder = codecs.getincrementaldecoder("utf-8")


def _block_text(block: Any) -> str:
    """The text of a ``text`` content block, else ``""`` (images, resources, raw...)."""
    return block.text if type(block) is TextContent else ""


#: How many plain text chunks a message collects before joining them into one block.
FOLD_CHUNKS: Final = 256


def _is_plain_text(block: Any) -> bool:
    """True for a ``text`` block without annotations or ``_meta`` (only its text matters)."""
    return type(block) is TextContent and block.annotations is UNSET and block.meta is UNSET


@dataclass(slots=True, eq=False)
class MessageState:
    """One user, agent or thought message: its content blocks in order, and its ``_meta``.

    ``content`` grows in place as chunks arrive; a whole-message update swaps it for a new
    list. Consecutive plain text chunks (no annotations, no ``_meta``) are kept as their
    strings and joined into one ``text`` block every :data:`FOLD_CHUNKS` chunks or when
    ``content`` or ``text`` is read, so a flood of tiny chunks costs its text, not one
    object per chunk; the text is exactly the same. :attr:`text` joins the text blocks
    lazily and caches the result, so reading it after every chunk costs only the new part.
    """

    kind: str
    message_id: str
    meta: dict[str, Any] | None = None
    _blocks: list[Any] = field(default_factory=list, repr=False)
    _pending: list[str] = field(default_factory=list, repr=False)
    _text: str = field(default="", repr=False)
    _seen: int = field(default=0, repr=False)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, MessageState):
            return NotImplemented
        return (self.kind, self.message_id, self.content, self.meta) == (
            other.kind,
            other.message_id,
            other.content,
            other.meta,
        )

    __hash__ = None  # type: ignore[assignment]

    @property
    def content(self) -> list[Any]:
        """The content blocks in order (read-only for callers; the list grows in place)."""
        if self._pending:
            self._fold()
        return self._blocks

    @property
    def text(self) -> str:
        """The concatenated text of the message's ``text`` blocks (other blocks skipped)."""
        content = self.content
        if self._seen < len(content):
            self._text += "".join([_block_text(b) for b in content[self._seen :]])
            self._seen = len(content)
        return self._text

    def append(self, block: Any) -> None:
        """Append one chunk's content block (plain text is collected, see the class doc)."""
        if _is_plain_text(block):
            pending = self._pending
            pending.append(block.text)
            if len(pending) >= FOLD_CHUNKS:
                self._fold()
        else:
            if self._pending:
                self._fold()
            self._blocks.append(block)

    def replace_content(self, blocks: list[Any] | None) -> None:
        """Replace all content (``None`` or ``[]`` clears it) and drop the text cache."""
        self._blocks = list(blocks) if blocks else []
        self._pending.clear()
        self._text = ""
        self._seen = 0

    def _fold(self) -> None:
        pending = self._pending
        self._blocks.append(TextContent(text=pending[0] if len(pending) == 1 else "".join(pending)))
        pending.clear()


@dataclass(slots=True, eq=False)
class SessionMessageState(MessageState):
    """One message between sessions (Preview ``session_message*``, kind ``"session"``):
    its content as for any message, plus which sessions it went between and its id in
    the other session's transcript (each ``None`` until reported). Peer text: sanitize
    before showing it."""

    sender_session_id: str | None = None
    recipient_session_id: str | None = None
    sender_message_id: str | None = None
    recipient_message_id: str | None = None


@dataclass(slots=True)
class ToolCallState:
    """One tool call, as patched by every ``tool_call_update`` and content chunk so far.

    A new call starts with kind ``other``, status ``pending``, no title and no name (TC-03).
    ``work`` is the foreground-work number it was first seen in (None: seen while idle);
    :func:`acp2.state.mark_cancelled` uses it to find the calls of the current work.
    """

    tool_call_id: str
    title: str | None = None
    kind: str = "other"
    status: str = "pending"
    content: list[Any] = field(default_factory=list)
    locations: list[Any] = field(default_factory=list)
    raw_input: Any = None
    raw_output: Any = None
    name: str | None = None
    capabilities: Any = None
    meta: dict[str, Any] | None = None
    work: int | None = field(default=None, compare=False)

    @property
    def finished(self) -> bool:
        """True when the status is ``completed``, ``failed`` or ``cancelled`` (TC-09)."""
        return self.status in FINAL_TOOL_STATUSES


@dataclass(slots=True)
class TerminalState:
    """One display-only terminal: its raw output bytes and their incrementally decoded text.

    ``output`` holds every byte the client should keep (snapshot plus later chunks, TM-05).
    :attr:`text` decodes only the bytes added since the last read, through one incremental
    UTF-8 decoder with ``errors="replace"``, so a code point split across chunks decodes
    whole (TM-06). A snapshot replaces the bytes and resets the decoder.
    """

    terminal_id: str
    command: str | None = None
    cwd: str | None = None
    output: bytearray = field(default_factory=bytearray)
    output_meta: dict[str, Any] | None = None
    exit_status: Any = None
    size: Any = None
    capabilities: Any = None
    meta: dict[str, Any] | None = None
    _decoder: codecs.IncrementalDecoder = field(
        default_factory=lambda: _Utf8Decoder(errors="replace"), compare=False, repr=False
    )
    _text: str = field(default="", compare=False, repr=False)
    _decoded: int = field(default=0, compare=False, repr=False)

    @property
    def text(self) -> str:
        """The output decoded as UTF-8 (invalid bytes become U+FFFD); control codes kept."""
        if self._decoded < len(self.output):
            self._text += self._decoder.decode(bytes(self.output[self._decoded :]))
            self._decoded = len(self.output)
        return self._text

    @property
    def exited(self) -> bool:
        """True once a concrete ``exitStatus`` object has been reported (TM-07)."""
        return self.exit_status is not None

    def append(self, data: bytes) -> None:
        """Append decoded chunk bytes to the output (TM-06)."""
        self.output += data

    def replace_output(self, data: bytes) -> None:
        """Replace every stored byte by a snapshot and restart decoding (TM-05)."""
        self.output = bytearray(data)
        self._decoder = _Utf8Decoder(errors="replace")
        self._text = ""
        self._decoded = 0


@dataclass(slots=True)
class PlanState:
    """The latest full snapshot of one plan (PN-02): a ``PlanItems`` model or a raw unknown
    plan type (PN-05), which still replaces whatever the ``planId`` held before."""

    plan_id: str
    plan: Any

    @property
    def entries(self) -> list[Any]:
        """The plan's entries when it is an ``items`` plan, else ``[]``."""
        if isinstance(self.plan, Raw):
            return []
        entries = getattr(self.plan, "entries", None)
        return entries if isinstance(entries, list) else []


@dataclass(slots=True)
class CompactionState:
    """One context compaction (Nov): status, summary blocks, error text and ``_meta``."""

    compaction_id: str
    status: str = "in_progress"
    summary: list[Any] = field(default_factory=list)
    error: str | None = None
    meta: dict[str, Any] | None = None


@dataclass(slots=True)
class UsageState:
    """The latest context usage: tokens ``used`` of ``size``, and the cumulative ``cost``."""

    used: int
    size: int
    cost: Any = None


@dataclass(slots=True)
class TokenTotals:
    """Token counts summed over every idle ``state_update`` that reported ``usage``
    (Preview, unstable): ``turns`` counts those reports. The optional counts
    (``thought``, ``cached_read``, ``cached_write``) sum only the reports that had them."""

    turns: int = 0
    total: int = 0
    input: int = 0
    output: int = 0
    thought: int = 0
    cached_read: int = 0
    cached_write: int = 0

    def add(self, usage: Any) -> None:
        """Add one :class:`acp2.schema.Usage` report (a missing optional count adds 0)."""
        self.turns += 1
        self.total += usage.total_tokens
        self.input += usage.input_tokens
        self.output += usage.output_tokens
        self.thought += _count(usage.thought_tokens)
        self.cached_read += _count(usage.cached_read_tokens)
        self.cached_write += _count(usage.cached_write_tokens)


def _count(value: Any) -> int:
    return value if type(value) is int else 0


@dataclass(slots=True)
class ChildSession:
    """One child session the parent created and owns (Preview ``subagent_update``), as
    patched by every update for its id: the parent's display metadata, the mirrored
    foreground ``state`` snapshot (``None``: not reported, which is not idle), what the
    client may do to it (``capabilities``; ``None`` permits nothing), and where it runs
    (``cwd`` / ``additional_directories``; ``None`` inherits the parent's). The child's own
    updates arrive under its id, not here."""

    session_id: str
    title: str | None = None
    description: str | None = None
    capabilities: Any = None
    state: Any = None
    cwd: str | None = None
    additional_directories: list[str] | None = None
    meta: dict[str, Any] | None = None

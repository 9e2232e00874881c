"""The coding agent's own slash commands, offered as ACP ``available_commands``:

* ``/compact`` -- the model summarises the conversation; the session goes on from that
  summary (the system prompt, then the summary), so a long session fits its window again;
* ``/diff`` -- what this session wrote: each file it changed, from before its first
  edit to its last, as one unified diff (nothing the user changed meanwhile);
* ``/undo`` -- revert the session's last file edit (a created file is removed); refused
  when the file changed since, so nobody's later work is overwritten.

A prompt whose text starts with one of these names runs it instead of the model loop
(:func:`command_of`). Edits are recorded by :class:`EditJournal` (the toolbox calls
:meth:`EditJournal.record` after each write), kept in ``session.data``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

import anyio

from acp2.coder.diffs import file_diff, git_patch
from acp2.coder.messages import Message, ModelRequest
from acp2.coder.tools.errors import ToolError
from acp2.coder.tools.files import FileChange, apply_change
from acp2.coder.tools.sandbox import Sandbox
from acp2.errors import ModelError
from acp2.schema import AvailableCommand, ToolCallLocation

if TYPE_CHECKING:
    from acp2.agent import Turn
    from acp2.coder.loop import Conversation
    from acp2.coder.providers.base import ChatModel

__all__ = ["COMMANDS", "EDITS_KEY", "EditJournal", "command_of", "run_command"]

#: Where the session's :class:`EditJournal` lives in ``session.data``.
EDITS_KEY: Final = "acp2.coder.edits"
#: How many edits ``/undo`` can take back, newest first.
UNDO_DEPTH: Final = 50

COMMANDS: Final = (
    AvailableCommand(
        name="compact", description="Summarise the conversation and go on from the summary"
    ),
    AvailableCommand(name="diff", description="Show what this session changed in your files"),
    AvailableCommand(name="undo", description="Revert this session's last file edit"),
)
_NAMES: Final = frozenset(command.name for command in COMMANDS)

#: What the model is asked for by ``/compact``.
SUMMARY_REQUEST: Final = (
    "Summarise our conversation so far for yourself, to continue from it: the user's goal, "
    "what was done (files changed, commands run, results), decisions, and what is left. "
    "Be complete but brief; plain text."
)


@dataclass
class EditJournal:
    """The files this session wrote: each one's text before its first edit
    (``original``, None for a file it created), its text after its last (``latest``),
    and the last :data:`UNDO_DEPTH` changes (``edits``) for ``/undo``."""

    original: dict[str, str | None] = field(default_factory=dict)
    latest: dict[str, str | None] = field(default_factory=dict)
    relative: dict[str, str] = field(default_factory=dict)
    edits: list[FileChange] = field(default_factory=list)

    def record(self, change: FileChange) -> None:
        """Note a change the toolbox has written."""
        real = change.path.real
        self.original.setdefault(real, change.old)
        self.latest[real] = change.new
        self.relative[real] = change.path.relative
        self.edits = [*self.edits, change][-UNDO_DEPTH:]

    def patch(self) -> str:
        """The session's changes as one unified diff (``""`` when none is left)."""
        parts = []
        for real, before in self.original.items():
            after = self.latest[real]
            if before == after:
                continue
            shown = self.relative[real]
            if after is None:  # created, then undone: back to nothing
                continue
            parts.append(git_patch(shown, before, after))
        return "".join(parts)


def command_of(text: str) -> tuple[str, str] | None:
    """``(name, argument)`` when prompt ``text`` runs one of :data:`COMMANDS`."""
    stripped = text.strip()
    if not stripped.startswith("/"):
        return None
    name, _, arg = stripped[1:].partition(" ")
    return (name, arg.strip()) if name in _NAMES else None


def journal_of(data: dict[str, object]) -> EditJournal:
    """The session's :class:`EditJournal` (made on first use)."""
    journal = data.get(EDITS_KEY)
    if not isinstance(journal, EditJournal):
        journal = EditJournal()
        data[EDITS_KEY] = journal
    return journal


async def run_command(
    turn: Turn, name: str, conversation: Conversation, model: ChatModel, sandbox: Sandbox
) -> str:
    """Run command ``name`` in ``turn``; return the stop reason."""
    journal = journal_of(turn.session.data)
    if name == "compact":
        return await _compact(turn, conversation, model)
    if name == "diff":
        patch = journal.patch()
        await turn.say(f"```diff\n{patch}```" if patch else "This session changed no files.")
        return "end_turn"
    return await _undo(turn, journal, conversation, sandbox)


async def _compact(turn: Turn, conversation: Conversation, model: ChatModel) -> str:
    messages = list(conversation.messages)
    if len(messages) <= 2:
        await turn.say("Nothing to compact yet.")
        return "end_turn"
    request = ModelRequest((*messages, Message("user", SUMMARY_REQUEST)), ())
    try:
        reply = await model.complete(request, _Quiet())
    except ModelError as exc:
        await turn.say(f"Not compacted: {exc}. The conversation is kept as it was.")
        return "end_turn"
    summary = reply.text.strip()
    if not summary:
        await turn.say("The model gave no summary; the conversation is kept as it was.")
        return "end_turn"
    kept = [m for m in messages[:1] if m.role == "system"]
    note = f"A summary of our conversation so far (it was compacted):\n\n{summary}"
    conversation.messages[:] = [*kept, Message("user", note)]
    said = f"Compacted the conversation ({len(messages)} messages) to this summary:\n\n"
    await turn.say(said + summary)
    return "end_turn"


class _Quiet:
    """A stream sink that keeps the summary's chunks off the screen (it is said whole)."""

    async def text(self, delta: str) -> None:
        """Drop a text chunk."""

    async def reasoning(self, delta: str) -> None:
        """Drop a reasoning chunk."""


async def _undo(
    turn: Turn, journal: EditJournal, conversation: Conversation, sandbox: Sandbox
) -> str:
    if not journal.edits:
        await turn.say("Nothing to undo: this session has not edited a file.")
        return "end_turn"
    change = journal.edits[-1]
    call = await turn.tool_call(
        f"Undo the last edit of {change.path.relative}",
        kind="edit",
        locations=[ToolCallLocation(path=change.path.shown)],
    )
    await call.start()
    try:
        await anyio.to_thread.run_sync(_revert, sandbox, change)
    except (ToolError, OSError) as exc:
        await turn.say(f"Not undone: {exc}")
        await call.fail()
        return "end_turn"
    journal.edits.pop()
    journal.latest[change.path.real] = change.old
    await call.complete(content=[file_diff(change.path.real, change.new, change.old or "")])
    conversation.messages.append(
        Message("user", f"(I reverted your last edit of {change.path.relative} with /undo.)")
    )
    await turn.say(f"Reverted the last edit of {change.path.relative}.")
    return "end_turn"


def _revert(sandbox: Sandbox, change: FileChange) -> None:
    """Write ``change.old`` back (remove a created file) if the file still holds
    ``change.new``; raise ToolError otherwise."""
    if change.old is not None:
        apply_change(sandbox, FileChange(change.path, change.new, change.old))
        return
    target = sandbox.resolve_for_write(change.path.shown)
    parent, name = os.path.split(target.real)
    dir_fd = sandbox.open_dir(parent, os.path.dirname(target.relative) or ".")
    try:
        fd = os.open(name, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0), dir_fd=dir_fd)
        with os.fdopen(fd, "rb") as handle:
            current = handle.read().decode("utf-8", "replace")
        if current != change.new:
            raise ToolError(f"{target.relative} changed since it was created; not removed")
        os.unlink(name, dir_fd=dir_fd)
    finally:
        os.close(dir_fd)

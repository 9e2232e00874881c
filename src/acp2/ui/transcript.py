"""The chat without a terminal: prompts read line by line, a plain transcript printed.

Used when stdin or stdout is not a TTY (scripts, CI, ``echo "fix the failing test" |
acp2 demo``). Each prompt line starts one turn; the transcript shows ``> prompt``, then
the turn's entries as they settle (checked :data:`FLUSH_HZ` times a second), then the
usage and ``[stop: reason]``. Permission requests are answered by the ``allow`` /
``deny`` policy and logged, or with ``ask`` read as a number from the next input line.
"""

from __future__ import annotations

from typing import Any, Final, TextIO

import anyio

from acp2 import sanitize
from acp2.client import (
    ClientSession,
    ElicitationRequest,
    PermissionPolicy,
    PermissionRequest,
    allow_all,
    deny_all,
)
from acp2.client.elicitation import ElicitationAnswer, ElicitationPolicy
from acp2.client.permissions import PermissionMode
from acp2.errors import RequestError
from acp2.schema import PermissionOption
from acp2.state import SessionState
from acp2.ui import plain
from acp2.ui.describe import Seen
from acp2.ui.lines import LineReader
from acp2.ui.permission import asked, choice_text, parse_choice, request_text
from acp2.ui.settle import NoticeTracker, Settler
from acp2.ui.subagents import SubagentTracker

__all__ = ["FLUSH_HZ", "TranscriptChat"]

#: How often settled entries are printed during a turn.
FLUSH_HZ: Final = 10.0


class TranscriptChat:
    """Reads prompts from ``reader``, writes the transcript to ``out``.

    ``permission`` is ``allow``, ``deny`` or ``ask``. :meth:`run` returns 0 when every
    turn ended with ``end_turn``, else 1.
    """

    def __init__(
        self, out: TextIO, reader: LineReader, *, permission: PermissionMode = "deny"
    ) -> None:
        self.out = out
        self.reader = reader
        self.permission = permission
        self.session: Any = None
        self.settler = Settler(SessionState())
        self.notices = NoticeTracker(self.settler.state)
        self.subagents = SubagentTracker()
        self.stops: list[str | None] = []
        self.seen = Seen()

    def write(self, text: str) -> None:
        """Write one or more lines to the transcript, flushed at once."""
        self.out.write(text + "\n")
        self.out.flush()

    def error(self, message: str) -> None:
        """Show an error that ends the chat."""
        self.write(f"[error] {sanitize.prose(message)}")

    def note(self, text: str) -> None:
        """Show an informational line."""
        self.write(sanitize.prose(text))

    def policy(self) -> PermissionPolicy:
        """The permission policy to connect with (it logs every decision)."""
        return self._decide

    def elicitation_policy(self) -> ElicitationPolicy:
        """The elicitation policy: with ``ask``, every form field is read from the next
        input line (as a permission choice is); otherwise each request is declined and
        the transcript says so."""
        from acp2.ui.elicit_ask import ask

        async def policy(request: ElicitationRequest) -> ElicitationAnswer:
            self.flush(messages_done=True)
            if self.permission == "ask":
                return await ask(request, self._read_answer, self.write)
            self.write(f"[elicitation] {sanitize.line(request.message)} -> declined")
            return None

        return policy

    async def _read_answer(self, prompt: str, default: str) -> str | None:
        shown = f" [{default}]" if default else ""
        self.out.write(f"{prompt.rstrip()}{shown} ")
        self.out.flush()
        answer = await self.reader.readline()
        if not answer:
            return None
        self.write(sanitize.line(answer.rstrip("\n")))
        text = answer.strip()
        return text or default

    async def _decide(self, request: PermissionRequest) -> PermissionOption | None:
        self.flush(messages_done=True)
        shown = asked(request)
        if self.permission != "ask":
            option = allow_all(request) if self.permission == "allow" else deny_all(request)
            self.write(f"[permission] {shown.title} -> {choice_text(option)}")
            for command, _ in shown.commands:
                self.write(f"  $ {command}")
            return option
        self.write(request_text(request))
        self.out.write(f"choose [{shown.hint}]: ")
        self.out.flush()
        answer = await self.reader.readline()
        choice = parse_choice(request, answer)
        option = choice if isinstance(choice, PermissionOption) else None
        self.write(f"{sanitize.line(answer.strip())}\n  -> {choice_text(option)}")
        if option is not None and shown.tool_call_id is not None and shown.diffs:
            self.seen.diffs.add(shown.tool_call_id)
        return option

    async def run(self, session: ClientSession, *, replayed: bool = False) -> int:
        """Run one turn per input line until the input ends; return the exit status."""
        self.session = session
        self.settler = Settler(session.state)
        self.notices = NoticeTracker(session.state)
        self.seen.root = session.cwd
        self.seen.children = session.children  # children folded under tool calls
        self.write(f"session {sanitize.line(session.id)} ({sanitize.line(session.cwd)})")
        if replayed:
            self.flush(final=True, show_user=True)
            self.write("--- resumed ---")
        while True:
            line = await self.reader.readline()
            if not line:
                break
            if line.strip():
                self.stops.append(await self.turn(line.strip()))
        return 0 if all(stop == "end_turn" for stop in self.stops) else 1

    async def turn(self, text: str) -> str | None:
        """Send ``text``, print the turn's transcript, return its stop reason."""
        self.write(f"> {text}")
        stop: str | None = None
        try:
            async with anyio.create_task_group() as group:
                group.start_soon(self._flusher)
                try:
                    work = await self.session.prompt(text)
                    stop = await work.wait()
                except RequestError as exc:
                    self.write(f"[refused] {sanitize.prose(str(exc))}")
                finally:
                    group.cancel_scope.cancel()
        finally:
            self.flush(final=True)  # also when the agent went away: show what it said
        usage = plain.usage_line(self.session.state)
        if usage:
            self.write(usage)
        self.write(plain.stop_text(stop, self.session.state.error if stop else None))
        return stop

    async def _flusher(self) -> None:
        while True:
            await anyio.sleep(1 / FLUSH_HZ)
            self.flush()

    def flush(
        self, *, final: bool = False, messages_done: bool = False, show_user: bool = False
    ) -> None:
        """Print the entries that settled (every one with ``final``) and new notices."""
        state = self.settler.state
        for child_line in self.subagents.take(self.session):  # children first: ran inside
            self.write(child_line)
        for entry in self.settler.take(final=final, messages_done=messages_done):
            text = plain.entry_text(entry, state, show_user=show_user, seen=self.seen)
            if text is not None:
                self.write(text)
        for notice in self.notices.take():
            self.write(plain.notice_text(notice))

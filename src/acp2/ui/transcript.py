"""The chat without a terminal: prompts read line by line, a plain transcript printed.

Used when stdin or stdout is not a TTY (scripts, CI, ``echo "fix the failing test" |
acp2 demo``). Each prompt line starts one turn; the transcript shows ``> prompt``, then
the turn's entries as they settle (checked :data:`FLUSH_HZ` times a second), then the
usage and ``[stop: reason]``. Permission requests are answered by the ``allow`` /
``deny`` policy and logged, or with ``ask`` read as a number from the next input line.

With a remote agent (``url``) other clients may share the session (``acp2 chat
--attach``): work they start is printed too, their prompts as ``> prompt``, then
``[stop: reason]``; an observer's typed prompts are refused with one line; a permission
request another controller answered first ends with ``-> answered elsewhere``; when the
session ends the transcript says so and the chat ends (:mod:`acp2.ui.watching`).
"""

from __future__ import annotations

from typing import Any, Final, TextIO

import anyio

from acp2 import sanitize
from acp2.client import (
    ClientConnection,
    ClientSession,
    ElicitationRequest,
    PermissionPolicy,
    PermissionRequest,
    allow_all,
    deny_all,
)
from acp2.client.describe import Seen
from acp2.client.elicitation import ElicitationAnswer, ElicitationPolicy
from acp2.client.permission_text import asked, choice_text, parse_choice, request_text
from acp2.client.permissions import PermissionMode
from acp2.errors import ConnectionClosed, RequestError
from acp2.schema import PermissionOption
from acp2.state import SessionState
from acp2.ui import plain
from acp2.ui.lines import LineReader
from acp2.ui.session_list import note_first_prompt
from acp2.ui.settle import NoticeTracker, Settler
from acp2.ui.subagents import SubagentTracker
from acp2.ui.watching import OBSERVER_READ_ONLY, Watch, ended_text

__all__ = ["FLUSH_HZ", "TranscriptChat"]

#: How often settled entries are printed during a turn.
FLUSH_HZ: Final = 10.0


class TranscriptChat:
    """Reads prompts from ``reader``, writes the transcript to ``out``.

    ``permission`` is ``allow``, ``deny`` or ``ask``. :meth:`run` returns 0 when every
    turn ended with ``end_turn``, else 1.
    """

    def __init__(
        self,
        out: TextIO,
        reader: LineReader,
        *,
        permission: PermissionMode = "deny",
        url: str | None = None,
    ) -> None:
        self.out = out
        self.url = url
        self.reader = reader
        self.permission = permission
        self.session: Any = None
        self.settler = Settler(SessionState())
        self.notices = NoticeTracker(self.settler.state)
        self.subagents = SubagentTracker()
        self.stops: list[str | None] = []
        self.seen = Seen()
        #: True while one of this chat's own turns runs.
        self._turning = False
        #: True while the input loop waits for a prompt line; a question asked then
        #: (another client's work) takes the next line through :attr:`_handoff`.
        self._reading_prompts = False
        self._handoff: list[Any] = []
        self.watch: Watch | None = None

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

    def starting(self, text: str) -> None:
        """Nothing: the transcript keeps to the conversation (scripts read it)."""

    @property
    def permission_mode(self) -> PermissionMode:
        """How permission requests are answered (``allow`` / ``deny`` / ``ask``)."""
        return self.permission

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
        answer = await self._answer_line()
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
        try:
            answer = await self._answer_line()
        except anyio.get_cancelled_exc_class():
            if self.url is not None:  # several clients: another controller answered first
                self.write("\n  -> answered elsewhere (the agent withdrew the request)")
            raise
        choice = parse_choice(request, answer)
        option = choice if isinstance(choice, PermissionOption) else None
        self.write(f"{sanitize.line(answer.strip())}\n  -> {choice_text(option)}")
        if option is not None and shown.tool_call_id is not None and shown.diffs:
            self.seen.diffs.add(shown.tool_call_id)
        return option

    async def run(
        self,
        session: ClientSession,
        *,
        replayed: bool = False,
        attached: bool = False,
        client: ClientConnection | None = None,
    ) -> int:
        """Run one turn per input line until the input ends (with ``url``: or the session
        ends); return the exit status. ``attached``: the session was joined with
        ``--attach`` (its history was replayed). ``client`` is not needed here (no
        command opens another session)."""
        self.session = session
        self.settler = Settler(session.state)
        self.notices = NoticeTracker(session.state)
        self.seen.root = session.cwd
        self.seen.children = session.children  # children folded under tool calls
        self.write(f"session {sanitize.line(session.id)} ({sanitize.line(session.cwd)})")
        if replayed:
            self.flush(final=True, show_user=True)
            self.write(f"--- attached as {session.role} ---" if attached else "--- resumed ---")
        if self.url is None:
            await self._read_turns()
        else:
            await self._watched()
        return 0 if all(stop == "end_turn" for stop in self.stops) else 1

    async def _read_turns(self) -> None:
        """One turn per input line until the input ends (an observer's are refused)."""
        while True:
            self._reading_prompts = True
            try:
                line = await self.reader.readline()
            finally:
                self._reading_prompts = False
            if self._handoff and line:
                self._handoff.pop(0).send_nowait(line)  # the answer to a question
                continue
            if not line:
                break
            if not line.strip():
                continue
            if self.session.role == "observer":
                self.write(OBSERVER_READ_ONLY)
                continue
            stop = await self.turn(line.strip())
            if self.watch is not None and self.watch.ended is not None:
                break  # the session ended mid-turn: "the session ended", status 0
            self.stops.append(stop)

    async def _answer_line(self) -> str:
        """The next input line for a question: read here, or handed over by the input
        loop when it is the one waiting for a line."""
        if not self._reading_prompts:
            return await self.reader.readline()
        send, receive = anyio.create_memory_object_stream[str](1)
        self._handoff.append(send)
        try:
            with receive:
                return await receive.receive()
        finally:
            if send in self._handoff:
                self._handoff.remove(send)

    async def _watched(self) -> None:
        """:meth:`_read_turns`, while the work other clients start is printed too; ends
        with the input or the session."""
        watch = self.watch = Watch(self.session)
        try:
            async with anyio.create_task_group() as group:
                group.start_soon(watch.run)
                group.start_soon(self._follow, watch, group.cancel_scope)
                await self._read_turns()
                group.cancel_scope.cancel()
        finally:
            watch.close()
        if watch.ended is not None:
            self.write(ended_text(watch.ended))

    async def _follow(self, watch: Watch, scope: anyio.CancelScope) -> None:
        """Print work this chat did not start, until the session ends."""
        while watch.ended is None:
            if not self._turning and (self.session.state.busy or watch.unseen()):
                watch.see()
                await self._follow_work(watch)
                continue
            await watch.wake.wait()
            watch.rearm()
        scope.cancel()

    async def _follow_work(self, watch: Watch) -> None:
        """Print another client's work as it settles, then its stop line."""
        while self.session.state.busy and not self._turning and watch.ended is None:
            with anyio.move_on_after(1 / FLUSH_HZ):
                await watch.wake.wait()
            watch.rearm()
            if not self._handoff:  # not while a question waits for its answer line
                self.flush(show_user=True)
        if self._turning:
            return  # this chat's own turn goes on printing
        self.flush(final=True, show_user=True)
        state = self.session.state
        usage = plain.usage_line(state)
        if usage:
            self.write(usage)
        self.write(plain.stop_text(state.stop_reason, state.error))

    async def turn(self, text: str) -> str | None:
        """Send ``text``, print the turn's transcript, return its stop reason."""
        self.write(f"> {text}")
        self._turning = True
        try:
            return await self._turn(text)
        finally:
            self._turning = False
            if self.watch is not None:
                self.watch.see()  # this turn showed all the work that ran meanwhile

    async def _turn(self, text: str) -> str | None:
        stop: str | None = None
        try:
            async with anyio.create_task_group() as group:
                group.start_soon(self._flusher)
                try:
                    work = await self.session.prompt(text)
                    note_first_prompt(self.session.id, text)  # a title for session lists
                    stop = await work.wait()
                except RequestError as exc:
                    self.write(f"[refused] {sanitize.prose(str(exc))}")
                except ConnectionClosed as exc:
                    if self.watch is None:
                        raise  # a local agent that went away: the chat's error (exit 3)
                    # A remote session that ended mid-turn ends the chat as it ends an
                    # attached one: "the session ended: <why>", status 0 (docs/remote.md).
                    self.watch.ended = self.watch.ended or exc
                finally:
                    group.cancel_scope.cancel()
        finally:
            self.flush(final=True)  # also when the agent went away: show what it said
        if self.watch is not None and self.watch.ended is not None:
            return None  # no stop line: the session ended (said once the input loop ends)
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

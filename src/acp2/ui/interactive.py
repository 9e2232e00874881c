"""The interactive chat: prompt_toolkit input, a rich live region while the agent works.

One turn: the prompt is sent, a :class:`~rich.live.Live` region shows what is still
changing and is redrawn :data:`~acp2.ui.live.FPS` times a second from the session state
(never per update); entries that settle are printed above it once. Ctrl-C cancels the
turn (``session/cancel``) and shows ``cancelling…`` until the agent reports idle; a second
Ctrl-C while cancelling quits. A permission request pauses the live region, shows the
request and reads the choice (:mod:`acp2.ui.asking`).

Lines typed during a turn are queued (:mod:`acp2.ui.turnkeys`) and sent in order once
the agent is idle; after a cancelled turn they are put back in the prompt for editing
instead. A line is a prompt, one of the chat's own commands (:mod:`acp2.ui.slash`) or
an agent command (:mod:`acp2.ui.commands` tells them apart); ``@path`` words attach files
(:mod:`acp2.ui.mentions`). Leaving prints the command that resumes the session.

With a remote agent (``url``) other clients may share the session (``acp2 chat
--attach``, :mod:`acp2.ui.watching`): work one of them starts while this chat waits at
its prompt is shown like a turn of its own (the prompt gives the terminal back, what was
typed is kept), their prompts included; an observer's prompts and cancels are refused
with one line; and when the session ends the chat says so and ends.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from collections.abc import Sequence
from dataclasses import replace
from functools import partial
from typing import Any, TextIO

import anyio
from anyio.abc import TaskGroup
from prompt_toolkit import PromptSession
from rich.console import Console
from rich.text import Text

from acp2 import sanitize
from acp2.client import ClientConnection, ClientSession, PermissionPolicy
from acp2.client.elicitation import ElicitationPolicy
from acp2.client.permissions import PermissionMode
from acp2.errors import Acp2Error, ConnectionClosed, LocalProtocolError, RequestError
from acp2.schema import StateUpdate, TextContent, supports
from acp2.state import SessionState
from acp2.ui import background, mentions, options
from acp2.ui.asking import Asker
from acp2.ui.chatview import ChatView, collapsed_view, status_extras
from acp2.ui.commands import agent_commands, parse_line
from acp2.ui.history import open_history
from acp2.ui.live import FPS, LiveRegion, PausableLive
from acp2.ui.prompt import ChatCompleter, ExitGuard, chat_key_bindings, make_prompt_session
from acp2.ui.reconnect_status import ReconnectStatus
from acp2.ui.session_list import note_first_prompt
from acp2.ui.settle import NoticeTracker, Settler
from acp2.ui.slash import SlashCommands
from acp2.ui.subagents import SubagentTracker
from acp2.ui.turnkeys import TurnKeys, quiet_input
from acp2.ui.watching import (
    OBSERVER_CANNOT_CANCEL,
    OBSERVER_HINT,
    OBSERVER_READ_ONLY,
    Watch,
    ended_text,
)

__all__ = ["InteractiveChat"]


class InteractiveChat(ChatView):
    """The chat on a terminal. ``permission`` is ``ask`` (the default), ``allow`` or
    ``deny``; ``first_prompt`` pre-fills the first input line (the demo's suggestion);
    ``agent_command`` makes the resume hint printed on leaving; ``url`` is the remote
    agent's (then work other clients start is shown too, and ``/info`` says how to
    attach)."""

    def __init__(
        self,
        console: Console,
        *,
        permission: PermissionMode = "ask",
        first_prompt: str | None = None,
        expand_thoughts: bool = False,
        stdin: TextIO | None = None,
        agent_command: Sequence[str] = (),
        url: str | None = None,
    ) -> None:
        self.console = console
        self.url = url
        #: Follows the session for work of other clients and its end (with ``url``).
        self.watch: Watch | None = None
        #: Set while a live region is up (a permission request waits for one).
        self.live_ready = anyio.Event()
        self.view = collapsed_view(expand_thoughts=expand_thoughts)
        self.first_prompt = first_prompt
        self.stdin = stdin or sys.stdin
        self.agent_command = list(agent_command)
        self.session: Any = None
        #: The connection the session is on (``run`` sets it): /clear, /sessions, /resume.
        self.client: ClientConnection | None = None
        self.settler = Settler(SessionState())
        self.notices = NoticeTracker(self.settler.state)
        self.subagents = SubagentTracker()
        self.live: PausableLive | None = None
        self.region: LiveRegion | None = None
        self.quit = False
        #: Leave once idle (``/quit``, or Ctrl-D typed during a turn).
        self.leaving = False
        #: Prompts typed during a turn, sent in order once idle.
        self.queue: list[str] = []
        #: The output of ``!commands`` that goes with the next prompt.
        self.shell_output: list[str] = []
        #: What the remote link is doing (``reconnecting · attempt 2 in 1s``).
        self.link_status = ReconnectStatus()
        self.guard = ExitGuard()
        self.slash = SlashCommands(self)
        self.keys: TurnKeys | None = None
        self._turn_group: TaskGroup | None = None
        self._cancelling = False
        self._default = first_prompt or ""
        self.asker = Asker(self, permission)

    # -- wiring ----------------------------------------------------------------------------

    @property
    def permission_mode(self) -> PermissionMode:
        """How permission requests are answered (``allow`` / ``deny`` / ``ask``)."""
        return self.asker.mode

    def policy(self) -> PermissionPolicy:
        """The permission policy to connect with (answers through this chat)."""
        return self.asker.policy

    def elicitation_policy(self) -> ElicitationPolicy:
        """The elicitation policy to connect with: forms and links asked on this terminal
        (:mod:`acp2.ui.elicit_ask`)."""
        from acp2.ui.elicit_ask import interactive_policy

        return interactive_policy(self.asker)

    def error(self, message: str) -> None:
        """Show an error that ends the chat."""
        self.console.print(Text(f"error: {message}", style="bold red"))

    def note(self, text: str) -> None:
        """Show an informational line."""
        self.console.print(Text(text, style="dim"))

    def starting(self, text: str) -> None:
        """Show, dimmed, that the agent is being started or reached."""
        self.note(text)

    async def run(
        self,
        session: ClientSession,
        *,
        replayed: bool = False,
        attached: bool = False,
        client: ClientConnection | None = None,
    ) -> int:
        """Chat until the user leaves (Ctrl-D, Ctrl-C twice on an empty line, ``/quit``)
        or, with ``url``, the session ends; print the resume hint; return 0, or 130 when
        the user quit while cancelling. ``attached``: joined with ``--attach``."""
        self.client = client
        self.attach(session)
        where = sanitize.line(f"session {session.id} · {session.cwd}")  # the agent's id
        self.console.print(Text(where, style="dim"))
        if replayed:
            marker = f"attached as {session.role}" if attached else "resumed"
            self.show_resumed(session, announce=False, marker=marker)
        if self.url is None:
            return await self._chat()
        self.watch = Watch(session)
        try:
            async with anyio.create_task_group() as group:
                group.start_soon(self.watch.run)
                status = await self._chat()
                group.cancel_scope.cancel()
        finally:
            self.watch.close()
        return status

    async def _chat(self) -> int:
        prompts = make_prompt_session(
            ChatCompleter(
                lambda: self.session.state.available_commands,
                lambda: options.categories(self.session.state.config_options),
                lambda: self.session.cwd,
            ),
            toolbar=self.toolbar,
            bindings=chat_key_bindings(
                self.guard,
                {"c-t": self.toggle_thoughts, "c-o": self.toggle_output},
                on_armed=self._ask_again,
            ),
            history=open_history(self.session.cwd),
        )
        watch = self.watch
        with quiet_input(self.stdin):
            while not self.quit and not self.leaving:
                if watch is not None and watch.ended is not None:
                    self.note(ended_text(watch.ended))
                    return 0
                if watch is not None and (self.session.state.busy or watch.unseen()):
                    watch.see()
                    await self.show_work(None)  # another client's work
                    continue
                text = await self._next_line(prompts)
                if text is None:
                    break
                await self.handle(text)
        running = background.status_part(self.session.state)
        # The agent stops them when the connection ends -- unless other clients hold the
        # session: for an attached chat they go on.
        if running is not None and not self.session.attached:
            self.note(f"leaving stops the work still running: {running}")
        self.print_resume_hint()
        return 130 if self.quit else 0

    async def _next_line(self, prompts: PromptSession[str]) -> str | None:
        """The next queued prompt (shown as sent), else the next line typed."""
        if self.queue:
            text = self.queue.pop(0)
            self.console.print(Text.assemble(("❯ ", "bold cyan"), text))
            prompts.history.append_string(text)
            return text
        default, self._default = self._default, ""
        # Background work may start or end while the prompt waits: redraw its status line.
        unlisten = self.session.add_listener(partial(_redraw_on_state, prompts))
        try:
            return await self._typed_line(prompts, default)
        finally:
            unlisten()

    async def _typed_line(self, prompts: PromptSession[str], default: str) -> str | None:
        started = anyio.Event()
        if self.watch is None:
            return await self._read_typed(prompts, default, started)
        async with anyio.create_task_group() as group:
            group.start_soon(self._give_way, prompts, self.watch, started)
            try:
                text = await self._read_typed(prompts, default, started)
            finally:
                group.cancel_scope.cancel()
        return text

    async def _give_way(
        self, prompts: PromptSession[str], watch: Watch, started: anyio.Event
    ) -> None:
        """End the prompt (keeping what was typed) once another client's work starts or
        the session ends: the chat shows that instead, then asks again."""
        while watch.ended is None and not (self.session.state.busy or watch.unseen()):
            await watch.wake.wait()
            watch.rearm()
        await started.wait()  # the prompt has the terminal: it can be ended
        with contextlib.suppress(Exception):  # it may be ending on its own
            self._default = prompts.default_buffer.text
            prompts.app.exit(result="")

    async def _read_typed(
        self, prompts: PromptSession[str], default: str, started: anyio.Event
    ) -> str | None:
        guard = self.guard
        while True:
            try:
                text = await prompts.prompt_async(
                    [("class:prompt", "❯ ")], default=default, pre_run=started.set
                )
                guard.disarm()
                return text
            except EOFError:
                return None
            except KeyboardInterrupt:
                if guard.confirmed or guard.press():
                    return None
                self._ask_again()
                # A Ctrl-C that came as a signal, before the prompt took the terminal:
                # it counts as the first press, and the prompt opens again.
            finally:
                guard.confirmed = False

    def _ask_again(self) -> None:
        self.note("press ctrl-c again to exit (ctrl-d exits too)")

    def attach(self, session: ClientSession) -> None:
        """Show ``session`` from now on (``run`` does this first)."""
        self.session = session
        self.view.seen.root = session.cwd  # diff headers relative to the session root
        self.view.seen.children = session.children  # children folded under tool calls
        self.settler = Settler(session.state)
        self.notices = NoticeTracker(session.state)

    def show_resumed(
        self, session: ClientSession, *, announce: bool = True, marker: str = "resumed"
    ) -> None:
        """Switch to the resumed ``session`` and print its replayed conversation, then
        ``── marker ──``."""
        self.attach(session)
        if announce:
            where = sanitize.line(f"session {session.id} · {session.cwd}")
            self.console.print(Text(where, style="dim"))
        self.print_settled(final=True, view=replace(self.view, show_user=True))
        self.console.print(Text(f"── {marker} ──", style="dim"))

    async def handle(self, line: str) -> None:
        """Run one typed line: a built-in command, or a prompt (with its ``@`` files)."""
        text = line.strip()
        if not text:
            return
        if text.startswith("!"):  # a local shell command: never a prompt
            await self.run_shell(text[1:].strip())
            return
        names = [name for name, _, _ in agent_commands(self.session.state.available_commands)]
        parsed = parse_line(text, names)
        if parsed.kind == "builtin":
            await self.slash.run(parsed.name, parsed.arg)
        elif parsed.kind == "unknown":
            self.note(f"unknown command /{parsed.name}: /help lists the commands")
        elif self.session.role == "observer":
            self.note(OBSERVER_READ_ONLY)
        else:
            await self.turn(self._with_shell_output(self._attach_files(parsed.text)))

    async def run_shell(self, command: str) -> None:
        """``!command``: run it here (:mod:`acp2.ui.shell`), show its output sanitized and
        keep it for the next prompt; nothing is sent to the agent now."""
        from acp2.ui import shell

        if not command:
            self.note(
                "!COMMAND runs COMMAND in your shell here; its output goes with your next prompt"
            )
            return
        cwd = self.session.cwd if self.url is None else os.getcwd()  # the agent's is remote
        try:
            result = await shell.run_stoppable(
                command, cwd, started=lambda: self.note("running it here · ctrl-c stops it")
            )
        except OSError as exc:
            self.note(sanitize.prose(f"!{command}: {exc}"))
            return
        if result is None:
            self.note("stopped: nothing goes with the next prompt")
            return
        for text in shell.result_lines(result):
            self.console.print(Text(text), soft_wrap=True)
        self.shell_output.append(shell.context_text(result))
        self.note("this output goes with your next prompt")

    def _with_shell_output(self, prompt: str | list[Any]) -> str | list[Any]:
        """``prompt`` preceded by the output of the ``!commands`` run since the last one."""
        if not self.shell_output:
            return prompt
        context, self.shell_output = "\n\n".join(self.shell_output), []
        if isinstance(prompt, str):
            return f"{context}\n\n{prompt}"
        return [TextContent(text=context), *prompt]

    def _attach_files(self, text: str) -> str | list[Any]:
        if not mentions.mentions(text):
            return text
        caps = self.session.env.agent_capabilities
        prompt = getattr(caps.session, "prompt", None)
        embed = supports(getattr(prompt, "embedded_context", None))
        attached = mentions.prompt_blocks(text, self.session.cwd, embed=embed)
        for name, how in attached.notes:
            self.note(f"@{name}: {how}")
        return attached.blocks

    # -- one turn --------------------------------------------------------------------------

    async def turn(self, prompt: str | list[Any]) -> None:
        """Send ``prompt`` (text or content blocks) and show the work until idle; print
        the stop line."""
        await self.show_work(prompt)

    async def show_work(self, prompt: str | list[Any] | None) -> None:
        """Send ``prompt`` -- None: none, the work another client started -- and show the
        work until idle; print the stop line."""
        started = time.monotonic()
        self._cancelling = False
        self.keys = TurnKeys(self)
        # What was typed during an earlier turn and not sent yet goes on being typed.
        self.keys.editor.text, self._default = self._default, ""
        phase = "sending…" if prompt is not None else None
        self.region = LiveRegion(self.session.state, self.settler, phase=phase)
        # Another client's work: its prompt is news here, shown like the replayed ones.
        own_view = self.view
        self.view = replace(own_view, show_user=prompt is None or own_view.show_user)
        self.region.view = replace(self.view, live=True)
        self.region.queued = self.queue
        if self.session.role == "observer":  # say what this screen is, promise nothing
            self.region.watching, self.region.hint = True, OBSERVER_HINT
        self.region.typing = lambda: self.keys.editor.text if self.keys else ""
        self.region.extras = lambda: [*self.link_parts(), *status_extras(self.session.state)]
        stop: str | None = None
        with PausableLive(self.console, self.region) as live:
            self.live = live
            self.live_ready.set()
            try:
                stop = await self._work(prompt, live)
            finally:
                self.live = None
                self.live_ready = anyio.Event()
                live.stop()
                self.print_settled(final=True)  # also when the agent went away
                self.view = replace(self.view, show_user=own_view.show_user)
        self.print_stop(stop, time.monotonic() - started)
        self._after_turn(stop)
        if self.watch is not None:
            self.watch.see()  # this turn showed all the work that ran meanwhile

    def _after_turn(self, stop: str | None) -> None:
        """Keep what was being typed for the next prompt; after a cancel, put the queued
        prompts back there too, for editing."""
        typed = self.keys.editor.text if self.keys else ""
        self.keys = None
        if stop == "cancelled" and self.queue:
            typed = "\n".join([*self.queue, typed]).strip("\n")
            self.queue.clear()
            self.note("the queued prompts are back in the prompt, for editing")
        self._default = typed

    async def _work(self, prompt: str | list[Any] | None, live: PausableLive) -> str | None:
        stop: str | None = None  # stays None when the user quits while cancelling
        async with anyio.create_task_group() as group:
            self._turn_group = group
            group.start_soon(self._frames)
            group.start_soon(self._interrupts)
            if self.keys is not None:
                group.start_soon(self.keys.run, live)
            try:
                if prompt is None:
                    stop = await self._until_idle()
                else:
                    work = await self.session.prompt(prompt)
                    note_first_prompt(self.session.id, prompt)  # a title for /sessions
                    if self.region is not None and not self._cancelling:
                        self.region.phase = None
                    stop = await work.wait()
            except RequestError as exc:
                self.console.print(Text(f"the agent refused the prompt: {exc}", style="red"))
            except LocalProtocolError as exc:
                self.console.print(Text(f"not sent: {exc}", style="red"))
            except ConnectionClosed as exc:
                if self.watch is None:
                    raise  # a local agent that went away: the chat's error (exit 3)
                # A remote session that ended mid-turn ends this chat as it ends an
                # attached one: "the session ended: <why>", status 0 (docs/remote.md).
                self.watch.ended = self.watch.ended or exc
            finally:
                self._turn_group = None
                group.cancel_scope.cancel()
        return stop

    async def _until_idle(self) -> str | None:
        """Wait until the work another client started ended; its stop reason (None when
        the session ended first)."""
        watch = self.watch
        assert watch is not None
        while self.session.state.busy and watch.ended is None:
            await watch.wake.wait()
            watch.rearm()
        return None if watch.ended is not None else self.session.state.stop_reason

    async def _frames(self) -> None:
        while True:
            self.frame()
            await anyio.sleep(1 / FPS)

    def frame(self) -> None:
        """Print what settled above the live region, then redraw it (skipped while a
        permission prompt has the screen)."""
        live = self.live
        if live is not None and self.keys is not None:
            self.keys.tick(live)
        if live is None or self.asker.busy:
            return
        self.print_settled()
        live.refresh()

    async def _interrupts(self) -> None:
        with anyio.open_signal_receiver(signal.SIGINT) as signals:
            async for _ in signals:
                self.request_cancel()

    def run_at_once(self, name: str, arg: str) -> None:
        """Run the built-in ``name`` during the turn, beside it (``/bg``, ``/cancel-bg``);
        queued instead when no turn runs."""
        group = self._turn_group
        if group is None:
            self.queue.append(f"/{name} {arg}".strip())
        else:
            group.start_soon(self.slash.run, name, arg)

    def interrupt(self) -> None:
        """Esc during a turn: cancel it as one Ctrl-C does; pressed again it never quits."""
        if not self._cancelling:
            self.request_cancel()

    def request_cancel(self) -> None:
        """Ctrl-C during a turn: cancel it; a second one while cancelling quits."""
        group = self._turn_group
        if group is None:
            return
        if self._cancelling:
            self.quit = True
            group.cancel_scope.cancel()
            return
        self._cancelling = True
        observer = self.session.role == "observer"
        if self.region is not None:
            self.region.phase = None if observer else "cancelling…"
            self.region.hint = "ctrl-c again to quit"
        if observer:  # the work is not this chat's to stop
            self.note(OBSERVER_CANNOT_CANCEL)
        else:
            group.start_soon(self._cancel)

    async def _cancel(self) -> None:
        # If the agent is gone, the turn's own wait reports it; one report is enough.
        with contextlib.suppress(Acp2Error):
            await self.session.cancel()


def _redraw_on_state(prompts: PromptSession[str], update: Any, raw: bytes) -> None:
    """Redraw the prompt (its status line) when a ``state_update`` arrives."""
    if type(update) is StateUpdate and prompts.app.is_running:
        prompts.app.invalidate()

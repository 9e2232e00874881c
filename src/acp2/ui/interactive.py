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
(:mod:`acp2.ui.attach`). Leaving prints the command that resumes the session.
"""

from __future__ import annotations

import contextlib
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
from acp2.client import ClientSession, PermissionPolicy
from acp2.client.elicitation import ElicitationPolicy
from acp2.client.permissions import PermissionMode
from acp2.errors import Acp2Error, LocalProtocolError, RequestError
from acp2.schema import StateUpdate, supports
from acp2.state import SessionState
from acp2.ui import attach, background, options
from acp2.ui.asking import Asker
from acp2.ui.chatview import ChatView, collapsed_view, status_extras
from acp2.ui.commands import agent_commands, parse_line
from acp2.ui.history import open_history
from acp2.ui.live import FPS, LiveRegion, PausableLive
from acp2.ui.prompt import ChatCompleter, ExitGuard, chat_key_bindings, make_prompt_session
from acp2.ui.settle import NoticeTracker, Settler
from acp2.ui.slash import SlashCommands
from acp2.ui.subagents import SubagentTracker
from acp2.ui.turnkeys import TurnKeys, quiet_input

__all__ = ["InteractiveChat"]


class InteractiveChat(ChatView):
    """The chat on a terminal. ``permission`` is ``ask`` (the default), ``allow`` or
    ``deny``; ``first_prompt`` pre-fills the first input line (the demo's suggestion);
    ``agent_command`` makes the resume hint printed on leaving."""

    def __init__(
        self,
        console: Console,
        *,
        permission: PermissionMode = "ask",
        first_prompt: str | None = None,
        expand_thoughts: bool = False,
        stdin: TextIO | None = None,
        agent_command: Sequence[str] = (),
    ) -> None:
        self.console = console
        self.view = collapsed_view(expand_thoughts=expand_thoughts)
        self.first_prompt = first_prompt
        self.stdin = stdin or sys.stdin
        self.agent_command = list(agent_command)
        self.session: Any = None
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
        self.guard = ExitGuard()
        self.slash = SlashCommands(self)
        self.keys: TurnKeys | None = None
        self._turn_group: TaskGroup | None = None
        self._cancelling = False
        self._default = first_prompt or ""
        self.asker = Asker(self, permission)

    # -- wiring ----------------------------------------------------------------------------

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

    async def run(self, session: ClientSession, *, replayed: bool = False) -> int:
        """Chat until the user leaves (Ctrl-D, Ctrl-C twice on an empty line, ``/quit``);
        print the resume hint; return 0, or 130 when the user quit while cancelling."""
        self.attach(session)
        where = sanitize.line(f"session {session.id} · {session.cwd}")  # the agent's id
        self.console.print(Text(where, style="dim"))
        if replayed:
            self.show_resumed(session, announce=False)
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
            history=open_history(session.cwd),
        )
        with quiet_input(self.stdin):
            while not self.quit and not self.leaving:
                text = await self._next_line(prompts)
                if text is None:
                    break
                await self.handle(text)
        running = background.status_part(self.session.state)
        if running is not None:  # the agent stops them when the connection ends
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
        guard = self.guard
        while True:
            try:
                text = await prompts.prompt_async([("class:prompt", "❯ ")], default=default)
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

    def show_resumed(self, session: ClientSession, *, announce: bool = True) -> None:
        """Switch to the resumed ``session`` and print its replayed conversation."""
        self.attach(session)
        if announce:
            self.console.print(Text(f"session {session.id} · {session.cwd}", style="dim"))
        self.print_settled(final=True, view=replace(self.view, show_user=True))
        self.console.print(Text("── resumed ──", style="dim"))

    async def handle(self, line: str) -> None:
        """Run one typed line: a built-in command, or a prompt (with its ``@`` files)."""
        text = line.strip()
        if not text:
            return
        names = [name for name, _, _ in agent_commands(self.session.state.available_commands)]
        parsed = parse_line(text, names)
        if parsed.kind == "builtin":
            await self.slash.run(parsed.name, parsed.arg)
        elif parsed.kind == "unknown":
            self.note(f"unknown command /{parsed.name}: /help lists the commands")
        else:
            await self.turn(self._attach_files(parsed.text))

    def _attach_files(self, text: str) -> str | list[Any]:
        if not attach.mentions(text):
            return text
        caps = self.session.client.agent_capabilities
        prompt = getattr(caps.session, "prompt", None)
        embed = supports(getattr(prompt, "embedded_context", None))
        attached = attach.prompt_blocks(text, self.session.cwd, embed=embed)
        for name, how in attached.notes:
            self.note(f"@{name}: {how}")
        return attached.blocks

    # -- one turn --------------------------------------------------------------------------

    async def turn(self, prompt: str | list[Any]) -> None:
        """Send ``prompt`` (text or content blocks) and show the work until idle; print
        the stop line."""
        started = time.monotonic()
        self._cancelling = False
        self.keys = TurnKeys(self)
        # What was typed during an earlier turn and not sent yet goes on being typed.
        self.keys.editor.text, self._default = self._default, ""
        self.region = LiveRegion(self.session.state, self.settler, phase="sending…")
        self.region.view = replace(self.view, live=True)
        self.region.queued = self.queue
        self.region.typing = lambda: self.keys.editor.text if self.keys else ""
        self.region.extras = lambda: status_extras(self.session.state)
        stop: str | None = None
        with PausableLive(self.console, self.region) as live:
            self.live = live
            try:
                stop = await self._work(prompt, live)
            finally:
                self.live = None
                live.stop()
                self.print_settled(final=True)  # also when the agent went away
        self.print_stop(stop, time.monotonic() - started)
        self._after_turn(stop)

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

    async def _work(self, prompt: str | list[Any], live: PausableLive) -> str | None:
        stop: str | None = None  # stays None when the user quits while cancelling
        async with anyio.create_task_group() as group:
            self._turn_group = group
            group.start_soon(self._frames)
            group.start_soon(self._interrupts)
            if self.keys is not None:
                group.start_soon(self.keys.run, live)
            try:
                work = await self.session.prompt(prompt)
                if self.region is not None and not self._cancelling:
                    self.region.phase = None
                stop = await work.wait()
            except RequestError as exc:
                self.console.print(Text(f"the agent refused the prompt: {exc}", style="red"))
            except LocalProtocolError as exc:
                self.console.print(Text(f"not sent: {exc}", style="red"))
            finally:
                self._turn_group = None
                group.cancel_scope.cancel()
        return stop

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
        if self.region is not None:
            self.region.phase = "cancelling…"
            self.region.hint = "ctrl-c again to quit"
        group.start_soon(self._cancel)

    async def _cancel(self) -> None:
        # If the agent is gone, the turn's own wait reports it; one report is enough.
        with contextlib.suppress(Acp2Error):
            await self.session.cancel()


def _redraw_on_state(prompts: PromptSession[str], update: Any, raw: bytes) -> None:
    """Redraw the prompt (its status line) when a ``state_update`` arrives."""
    if type(update) is StateUpdate and prompts.app.is_running:
        prompts.app.invalidate()

"""The interactive chat: prompt_toolkit input, a rich live region while the agent works.

One turn: the prompt is sent, a :class:`~rich.live.Live` region shows what is still
changing and is redrawn :data:`~acp2.ui.live.FPS` times a second from the session state
(never per update); entries that settle are printed above it once. Ctrl-C cancels the
turn (``session/cancel``) and shows ``cancelling…`` until the agent reports idle; a second
Ctrl-C while cancelling quits. A permission request pauses the live region, shows the
request and reads the choice (:mod:`acp2.ui.asking`).
"""

from __future__ import annotations

import contextlib
import signal
import sys
import time
from collections.abc import Iterator
from dataclasses import replace
from typing import Any, TextIO

import anyio
from anyio.abc import TaskGroup
from prompt_toolkit.formatted_text import AnyFormattedText
from rich.console import Console
from rich.text import Text

from acp2.client import ClientSession, PermissionPolicy
from acp2.errors import Acp2Error, RequestError
from acp2.state import MessageState, SessionState
from acp2.ui import describe, sanitize
from acp2.ui.asking import Asker
from acp2.ui.blocks import View, entry_block, notice_block
from acp2.ui.live import FPS, LiveRegion, PausableLive
from acp2.ui.prompt import make_prompt_session
from acp2.ui.settle import NoticeTracker, Settler
from acp2.ui.style import elapsed_text, usage_text

__all__ = ["InteractiveChat", "quiet_input"]

_STOP_STYLES = {"end_turn": ("✓", "green"), "cancelled": ("⊘", "yellow"), "error": ("✗", "red")}


@contextlib.contextmanager
def quiet_input(stream: TextIO) -> Iterator[None]:
    """Keys typed outside a prompt are neither echoed (over the live region) nor
    line-buffered: they wait, byte for byte, for the next prompt, so a Ctrl-D typed as a
    turn ends still quits. Ctrl-C still raises SIGINT. prompt_toolkit switches to raw
    mode for each prompt and back to this afterwards. No-op off a terminal."""
    try:
        import termios

        fd = stream.fileno()
        saved = termios.tcgetattr(fd)
    except (ImportError, OSError, ValueError):
        yield
        return
    quiet = list(saved)
    quiet[3] &= ~(termios.ECHO | termios.ICANON)
    termios.tcsetattr(fd, termios.TCSANOW, quiet)
    try:
        yield
    finally:
        termios.tcsetattr(fd, termios.TCSANOW, saved)


class InteractiveChat:
    """The chat on a terminal. ``permission`` is ``ask`` (the default), ``allow`` or
    ``deny``; ``first_prompt`` pre-fills the first input line (the demo's suggestion)."""

    def __init__(
        self,
        console: Console,
        *,
        permission: str = "ask",
        first_prompt: str | None = None,
        expand_thoughts: bool = False,
        stdin: TextIO | None = None,
    ) -> None:
        self.console = console
        self.view = View(expand_thoughts=expand_thoughts, show_user=False)
        self.first_prompt = first_prompt
        self.stdin = stdin or sys.stdin
        self.session: Any = None
        self.settler = Settler(SessionState())
        self.notices = NoticeTracker(self.settler.state)
        self.live: PausableLive | None = None
        self.region: LiveRegion | None = None
        self.quit = False
        self._turn_group: TaskGroup | None = None
        self._cancelling = False
        self.asker = Asker(self, permission)

    # -- wiring ----------------------------------------------------------------------------

    def policy(self) -> PermissionPolicy:
        """The permission policy to connect with (answers through this chat)."""
        return self.asker.policy

    def error(self, message: str) -> None:
        """Show an error that ends the chat."""
        self.console.print(Text(f"error: {message}", style="bold red"))

    def note(self, text: str) -> None:
        """Show an informational line."""
        self.console.print(Text(text, style="dim"))

    async def run(self, session: ClientSession, *, replayed: bool = False) -> int:
        """Chat until the user quits (Ctrl-D, or Ctrl-C on an empty line); return 0, or
        130 when the user quit while a cancel was pending."""
        self.attach(session)
        where = sanitize.line(f"session {session.id} · {session.cwd}")  # the agent's id
        self.console.print(Text(where, style="dim"))
        if replayed:
            self.print_settled(final=True, view=replace(self.view, show_user=True))
            self.console.print(Text("── resumed ──", style="dim"))
        prompts = make_prompt_session(
            lambda: session.state.available_commands,
            toolbar=self._toolbar,
            on_toggle_thoughts=self.toggle_thoughts,
        )
        default = self.first_prompt or ""
        with quiet_input(self.stdin):
            while not self.quit:
                try:
                    text = await prompts.prompt_async([("class:prompt", "❯ ")], default=default)
                except (KeyboardInterrupt, EOFError):
                    break
                default = ""
                if text.strip():
                    await self.turn(text.strip())
        return 130 if self.quit else 0

    def attach(self, session: ClientSession) -> None:
        """Show ``session`` from now on (``run`` does this first)."""
        self.session = session
        self.view.seen.root = session.cwd  # diff headers relative to the session root
        self.settler = Settler(session.state)
        self.notices = NoticeTracker(session.state)

    # -- one turn --------------------------------------------------------------------------

    async def turn(self, text: str) -> None:
        """Send ``text`` and show the work until idle; print the stop line."""
        started = time.monotonic()
        self._cancelling = False
        self.region = LiveRegion(self.session.state, self.settler, phase="sending…")
        self.region.view = replace(self.view, live=True)
        stop: str | None = None
        with PausableLive(self.console, self.region) as live:
            self.live = live
            try:
                stop = await self._work(text)
            finally:
                self.live = None
                live.stop()
                self.print_settled(final=True)  # also when the agent went away
        self._print_stop(stop, time.monotonic() - started)

    async def _work(self, text: str) -> str | None:
        stop: str | None = None  # stays None when the user quits while cancelling
        async with anyio.create_task_group() as group:
            self._turn_group = group
            group.start_soon(self._frames)
            group.start_soon(self._interrupts)
            try:
                work = await self.session.prompt(text)
                if self.region is not None and not self._cancelling:
                    self.region.phase = None
                stop = await work.wait()
            except RequestError as exc:
                self.console.print(Text(f"the agent refused the prompt: {exc}", style="red"))
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
        if live is None or self.asker.busy:
            return
        self.print_settled()
        live.refresh()

    async def _interrupts(self) -> None:
        with anyio.open_signal_receiver(signal.SIGINT) as signals:
            async for _ in signals:
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
        if self.region is not None:
            self.region.phase = "cancelling…"
            self.region.hint = "ctrl-c again to quit"
        group.start_soon(self._cancel)

    async def _cancel(self) -> None:
        # If the agent is gone, the turn's own wait reports it; one report is enough.
        with contextlib.suppress(Acp2Error):
            await self.session.cancel()

    # -- output ----------------------------------------------------------------------------

    def print_settled(
        self, *, final: bool = False, messages_done: bool = False, view: View | None = None
    ) -> None:
        """Print the entries that settled (all of them with ``final``) and new notices."""
        shown = view or self.view
        for entry in self.settler.take(final=final, messages_done=messages_done):
            block = entry_block(entry, self.session.state, shown)
            if block is not None:
                self.console.print(block)
        for notice in self.notices.take():
            self.console.print(notice_block(notice))

    def _print_stop(self, stop: str | None, seconds: float) -> None:
        glyph, style = _STOP_STYLES.get(stop or "", ("■", "yellow"))
        shown = sanitize.line(stop or "stopped")  # an open enum: any agent string
        line = Text.assemble((f"{glyph} {shown}", f"bold {style}"))
        message = describe.error_message(self.session.state.error)
        if message:
            line.append(f": {message}", style=style)
        details = [elapsed_text(seconds), usage_text(self.session.state.usage)]
        line.append("".join(f" · {d}" for d in details if d), style="dim")
        self.console.print(line)

    def toggle_thoughts(self) -> None:
        """Ctrl-T: show thoughts in full (printing the last one again) or collapsed."""
        expanded = not self.view.expand_thoughts
        self.view = replace(self.view, expand_thoughts=expanded)
        self.console.print(Text(f"thoughts {'expanded' if expanded else 'collapsed'}", style="dim"))
        state = self.settler.state
        thoughts = [
            e for e in state.timeline if isinstance(e, MessageState) and e.kind == "thought"
        ]
        if expanded and thoughts:
            block = entry_block(thoughts[-1], state, self.view)
            if block is not None:
                self.console.print(block)

    def _toolbar(self) -> AnyFormattedText:
        state = self.session.state
        parts = [state.foreground.replace("_", " ")]
        if state.stop_reason:
            parts.append(state.stop_reason)
        usage = usage_text(state.usage)
        if usage:
            parts.append(usage)
        keys = "/ commands  ^T thoughts  ^D quit"
        return [("class:bottom-toolbar", f" {' · '.join(parts)} │ {keys}")]

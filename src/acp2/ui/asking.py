"""Answering permission requests in the interactive chat, with one key.

With ``ask``, the live region is paused (it leaves the screen), the text the agent said
so far is printed, then the request (:func:`~acp2.ui.blocks.permission_block`: what will
run, exactly, and the diff), and one key answers: ``y`` allow once, ``a`` always allow,
``n`` reject, a number for any option, or the arrow keys and Enter. ``i`` prints the
tool call's full raw input. Esc declines; Ctrl-C declines and cancels the turn. A status
line stays under the options while the chat waits. Once an edit is allowed, its diff is
shown afterwards as a ``+3 −1`` summary, not a second time. With ``allow`` / ``deny`` the
decision is made at once and shown as one line with the command it concerns.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Final

import anyio
from prompt_toolkit.application import Application
from prompt_toolkit.formatted_text import ANSI, AnyFormattedText, StyleAndTextTuples
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.layout import HSplit, Layout, Window
from prompt_toolkit.layout.controls import FormattedTextControl
from rich.text import Text

from acp2.client import PermissionRequest, allow_all, deny_all
from acp2.schema import PermissionOption
from acp2.ui.blocks import permission_block
from acp2.ui.permission import Asked, asked, choice_text

if TYPE_CHECKING:
    from acp2.ui.interactive import InteractiveChat

__all__ = ["Asker", "KeyChooser"]

#: What the chooser returns when ``i`` asked for the raw input.
SHOW_RAW: Final = "show raw input"
_HELP: Final = "←/→ enter · esc declines · ctrl-c cancels the turn"


class KeyChooser:
    """A one-line prompt_toolkit application that picks one of ``shown.offers`` with one
    key (or the arrows and Enter); :meth:`choose` returns the option, None (declined),
    :data:`SHOW_RAW`, or raises ``KeyboardInterrupt`` for Ctrl-C. ``status`` draws the
    line under the options (the chat's status line)."""

    def __init__(self, shown: Asked, status: AnyFormattedText = "") -> None:
        self.shown = shown
        self.status = status
        self.selected = 0
        keys = KeyBindings()
        for offer in shown.offers:
            for key in {offer.key, str(offer.number)}:
                keys.add(key)(self._pick(offer.option))
        if shown.raw_input_full is not None:
            keys.add("i")(lambda event: event.app.exit(result=SHOW_RAW))
        keys.add("left")(lambda event: self._move(-1))
        keys.add("up")(lambda event: self._move(-1))
        for key in ("right", "down", "tab"):
            keys.add(key)(lambda event: self._move(1))
        keys.add("enter")(lambda event: event.app.exit(result=shown.offers[self.selected].option))
        keys.add("escape", eager=True)(lambda event: event.app.exit(result=None))
        keys.add("c-c")(lambda event: event.app.exit(exception=KeyboardInterrupt()))
        keys.add("c-d")(lambda event: event.app.exit(result=None))
        body = Window(FormattedTextControl(self._options, show_cursor=False), height=1)
        under = Window(FormattedTextControl(lambda: self.status), height=1)
        self.app: Application[PermissionOption | str | None] = Application(
            layout=Layout(HSplit([body, under])),
            key_bindings=keys,
            erase_when_done=True,
            refresh_interval=0.5,
        )

    def _pick(self, option: PermissionOption) -> Callable[[KeyPressEvent], None]:
        def pick(event: KeyPressEvent) -> None:
            event.app.exit(result=option)

        return pick

    def _move(self, step: int) -> None:
        self.selected = (self.selected + step) % len(self.shown.offers)

    def _options(self) -> StyleAndTextTuples:
        parts: StyleAndTextTuples = [("bold", "choose ")]
        for index, offer in enumerate(self.shown.offers):
            colour = "fg:ansigreen" if offer.allows else "fg:ansired" if offer.rejects else ""
            chosen = " reverse" if index == self.selected else ""
            parts.append(("reverse bold", f" {offer.key} "))
            parts.append((colour + chosen, f" {offer.label} "))
            if offer.agent_name:
                parts.append(("fg:ansibrightblack", f'("{offer.agent_name}") '))
            parts.append(("", " "))
        raw = "i raw input · " if self.shown.raw_input_full is not None else ""
        parts.append(("fg:ansibrightblack", raw + _HELP))
        return parts

    async def choose(self) -> PermissionOption | str | None:
        """Wait for the key; prompt_toolkit leaves the SIGINT handler to the turn."""
        return await self.app.run_async(handle_sigint=False)


class Asker:
    """The interactive chat's permission policy (:meth:`policy`); ``busy`` is True while a
    request has the screen, so the chat does not redraw its live region meanwhile."""

    def __init__(self, chat: InteractiveChat, mode: str = "ask") -> None:
        self.chat = chat
        self.mode = mode
        self.busy = False
        self._lock = anyio.Lock()

    async def policy(self, request: PermissionRequest) -> PermissionOption | None:
        """Decide ``request``: by the fixed mode, or by asking (one request at a time)."""
        shown = asked(request)
        self.chat.view.seen.root = shown.root
        if self.mode != "ask":
            option = allow_all(request) if self.mode == "allow" else deny_all(request)
            self._say(f"permission: {shown.title} → {choice_text(option)}")
            for command, _ in shown.commands:
                self._say(f"  $ {command}")
            return option
        async with self._lock:
            return await self._ask(request, shown)

    async def _ask(self, request: PermissionRequest, shown: Asked) -> PermissionOption | None:
        chat = self.chat
        live = chat.live
        if live is None:
            # Not in a turn: the main prompt owns the terminal, so no second prompt.
            self._say(f"permission: {shown.title} → declined (no turn is running)")
            return None
        self.busy = True
        live.stop()
        try:
            chat.print_settled(messages_done=True)
            chat.console.print(permission_block(request, options=False))
            option = await self._read(shown)
            self._say(f"→ {choice_text(option)}")
            allowed = option is not None and option.kind.startswith("allow")
            if allowed and shown.diffs and shown.tool_call_id is not None:
                chat.view.seen.diffs.add(shown.tool_call_id)
            return option
        except anyio.get_cancelled_exc_class():
            self._say("→ the request was withdrawn")
            raise
        finally:
            self.busy = False
            if chat.live is live:
                live.start()

    async def _read(self, shown: Asked) -> PermissionOption | None:
        chooser = KeyChooser(shown, self._status)
        while True:
            try:
                choice = await chooser.choose()
            except KeyboardInterrupt:
                self.chat.request_cancel()
                return None
            except EOFError:
                return None
            if choice != SHOW_RAW:
                return choice if isinstance(choice, PermissionOption) else None
            self.chat.console.print(Text("raw input:", style="bold"))
            self.chat.console.print(Text(shown.raw_input_full or ""))

    def _status(self) -> AnyFormattedText:
        """The chat's status line, drawn under the options while waiting."""
        region = self.chat.region
        if region is None:
            return ""
        from acp2.ui.live import status_line

        line = status_line(region.state, phase=None, elapsed=region.clock() - region.started)
        console = self.chat.console
        with console.capture() as captured:
            console.print(line, end="")
        return ANSI(captured.get())

    def _say(self, text: str, style: str = "dim") -> None:
        self.chat.console.print(Text(text, style=style))

"""Answering a permission request with one key: ``y`` / ``a`` / ``n``, a number, or the
arrows and Enter (a one-line prompt_toolkit application; used by the chat and by
``acp2 run``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from prompt_toolkit.application import Application
from prompt_toolkit.formatted_text import AnyFormattedText, StyleAndTextTuples
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.layout import HSplit, Layout, Window
from prompt_toolkit.layout.controls import FormattedTextControl
from prompt_toolkit.output import Output

from acp2.client.permission_text import Asked
from acp2.schema import PermissionOption

__all__ = ["SHOW_RAW", "KeyChooser"]

#: What the chooser returns when ``i`` asked for the raw input.
SHOW_RAW: Final = "show raw input"
_HELP: Final = "←/→ and enter · esc declines · ctrl-c cancels the turn"


class KeyChooser:
    """A one-line prompt_toolkit application that picks one of ``shown.offers`` with one
    key (or the arrows and Enter); :meth:`choose` returns the option, None (declined),
    :data:`SHOW_RAW`, or raises ``KeyboardInterrupt`` for Ctrl-C. ``status`` draws the
    line under the options (the chat's status line); ``output`` defaults to stdout."""

    def __init__(
        self, shown: Asked, status: AnyFormattedText = "", *, output: Output | None = None
    ) -> None:
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
        body = Window(  # wraps: every option stays visible on a narrow terminal
            FormattedTextControl(self._options, show_cursor=False),
            wrap_lines=True,
            dont_extend_height=True,
        )
        rows = [body, Window(FormattedTextControl(self._help), wrap_lines=True)]
        if status:
            rows.append(Window(FormattedTextControl(lambda: self.status), height=1))
        self.app: Application[PermissionOption | str | None] = Application(
            layout=Layout(HSplit(rows)),
            key_bindings=keys,
            erase_when_done=True,
            refresh_interval=0.5,
            output=output,
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
        return parts

    def _help(self) -> StyleAndTextTuples:
        raw = "i shows the raw input · " if self.shown.raw_input_full is not None else ""
        return [("fg:ansibrightblack", raw + _HELP)]

    async def choose(self) -> PermissionOption | str | None:
        """Wait for the key; prompt_toolkit leaves the SIGINT handler to the turn."""
        return await self.app.run_async(handle_sigint=False)

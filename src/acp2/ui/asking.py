"""Answering permission requests in the interactive chat, with one key.

With ``ask``, the live region is paused (it leaves the screen), the text the agent said
so far is printed, then the request (:func:`~acp2.ui.blocks.permission_block`: what will
run, exactly, and the diff), and one key answers: ``y`` allow once, ``a`` always allow,
``n`` reject, a number for any option, or the arrow keys and Enter (after an "always"
answer one more key saves it as a lasting rule, :mod:`acp2.ui.remember`). ``i`` prints the
tool call's full raw input. Esc declines; Ctrl-C declines and cancels the turn. A status
line stays under the options while the chat waits. Once an edit is allowed, its diff is
shown afterwards as a ``+3 −1`` summary, not a second time. With ``allow`` / ``deny`` the
decision is made at once and shown as one line with the command it concerns.

With a remote agent (several clients may share the session) a request that arrives just
before the chat shows another client's work waits a moment for that view
(:data:`LIVE_WAIT`), and one the agent withdraws -- another controller answered first --
ends with ``→ answered elsewhere``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

import anyio
from prompt_toolkit.formatted_text import ANSI, AnyFormattedText
from rich.text import Text

from acp2.client import PermissionRequest, allow_all, deny_all
from acp2.client.permission_text import Asked, asked, choice_text
from acp2.client.permissions import PermissionMode
from acp2.schema import PermissionOption
from acp2.ui.blocks import permission_block
from acp2.ui.keys import SHOW_RAW, KeyChooser

if TYPE_CHECKING:
    from acp2.ui.interactive import InteractiveChat

__all__ = ["LIVE_WAIT", "Asker"]

#: How long a request waits for the chat to show the work it belongs to (seconds).
LIVE_WAIT = 2.0


class Asker:
    """The interactive chat's permission policy (:meth:`policy`); ``busy`` is True while a
    request has the screen, so the chat does not redraw its live region meanwhile."""

    def __init__(self, chat: InteractiveChat, mode: PermissionMode = "ask") -> None:
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

    @asynccontextmanager
    async def screen(self) -> AsyncIterator[bool]:
        """Have the screen for a question (an elicitation form): one at a time, the live
        region paused meanwhile. Yields False when no turn is running (the main prompt
        owns the terminal then: do not ask)."""
        async with self._lock:
            chat = self.chat
            live = chat.live
            if live is None:
                yield False
                return
            self.busy = True
            live.stop()
            try:
                chat.print_settled(messages_done=True)
                yield True
            finally:
                self.busy = False
                if chat.live is live:
                    live.start()

    async def _ask(self, request: PermissionRequest, shown: Asked) -> PermissionOption | None:
        chat = self.chat
        if chat.live is None and chat.url is not None:
            # Another client's work: the chat is about to show it (its prompt gives way).
            with anyio.move_on_after(LIVE_WAIT):
                await chat.live_ready.wait()
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
            await self._remember(request, option)
            allowed = option is not None and option.kind.startswith("allow")
            if allowed and shown.diffs and shown.tool_call_id is not None:
                chat.view.seen.diffs.add(shown.tool_call_id)
            return option
        except anyio.get_cancelled_exc_class():
            if chat.url is not None:  # several clients: another controller answered first
                self._say("→ answered elsewhere (the agent withdrew the request)")
            else:
                self._say("→ the request was withdrawn")
            raise
        finally:
            self.busy = False
            if chat.live is live:
                live.start()

    async def _remember(self, request: PermissionRequest, option: PermissionOption | None) -> None:
        """After an "always" answer, offer to save it as a lasting rule."""
        from acp2.ui.remember import offer_to_remember

        said = await offer_to_remember(request, option)
        if said is not None:
            self._say(said)

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
